//! Codec throughput: RESP bulk reply parsing and skipping, memcached VALUE parsing, and
//! command encoding. Figures are per reply or per command.

#![expect(
    missing_docs,
    reason = "criterion_group! generates an undocumented function"
)]

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use kvlab_proto::{memcache, resp};

fn resp_pipeline() -> Vec<u8> {
    let value = [b'x'; 100];
    let mut buf = Vec::new();
    for _ in 0..16 {
        resp::Frame::Bulk(Some(&value)).write(&mut buf);
    }
    buf
}

fn bench_resp(c: &mut Criterion) {
    let buf = resp_pipeline();
    let mut g = c.benchmark_group("resp");
    g.throughput(Throughput::Elements(16));
    g.bench_function("parse_16_bulk_100B", |b| {
        b.iter(|| {
            let buf = black_box(&buf[..]);
            let mut pos = 0;
            let mut total = 0;
            while let Ok(Some((frame, n))) = resp::parse(&buf[pos..]) {
                if let resp::Frame::Bulk(Some(v)) = frame {
                    total += v.len();
                }
                pos += n;
            }
            total
        })
    });
    g.bench_function("skip_16_bulk_100B", |b| {
        b.iter(|| {
            let buf = black_box(&buf[..]);
            let mut pos = 0;
            while let Ok(Some(n)) = resp::skip(&buf[pos..]) {
                pos += n;
            }
            pos
        })
    });
    let mut ok = Vec::new();
    for _ in 0..16 {
        ok.extend_from_slice(b"+OK\r\n");
    }
    g.bench_function("skip_16_ok", |b| {
        b.iter(|| {
            let buf = black_box(&ok[..]);
            let mut pos = 0;
            while let Ok(Some(n)) = resp::skip(&buf[pos..]) {
                pos += n;
            }
            pos
        })
    });
    let mut hgetall = Vec::new();
    resp::encode_command(
        &mut hgetall,
        &(0..20)
            .map(|i| format!("field{i}-value-of-some-length"))
            .collect::<Vec<_>>(),
    );
    g.throughput(Throughput::Elements(1));
    g.bench_function("parse_array_20_and_iterate", |b| {
        b.iter(|| {
            let (frame, _) = resp::parse(black_box(&hgetall)).unwrap().unwrap();
            frame
                .as_aggregate()
                .unwrap()
                .iter()
                .map(|f| f.as_bytes().map_or(0, <[u8]>::len))
                .sum::<usize>()
        })
    });
    g.finish();

    let mut g = c.benchmark_group("resp_encode");
    g.throughput(Throughput::Elements(1));
    let value = [b'v'; 100];
    let key = b"user6284781860667377211";
    let mut out = Vec::with_capacity(4096);
    g.bench_function("set_100B", |b| {
        b.iter(|| {
            out.clear();
            resp::set(&mut out, black_box(key), black_box(&value), None);
            out.len()
        })
    });
    g.bench_function("get", |b| {
        b.iter(|| {
            out.clear();
            resp::get(&mut out, black_box(key));
            out.len()
        })
    });
    g.finish();
}

fn bench_memcache(c: &mut Criterion) {
    let mut g = c.benchmark_group("memcache");
    g.throughput(Throughput::Elements(1));
    let value = [b'x'; 100];
    let mut buf = Vec::new();
    memcache::Reply::Value {
        key: b"user6284781860667377211",
        flags: 0,
        data: &value,
        cas: None,
    }
    .write(&mut buf);
    buf.extend_from_slice(b"END\r\n");
    g.bench_function("parse_value_100B_and_end", |b| {
        b.iter(|| {
            let buf = black_box(&buf[..]);
            let (v, n) = memcache::parse(buf).unwrap().unwrap();
            let (e, _) = memcache::parse(&buf[n..]).unwrap().unwrap();
            (v, e)
        })
    });
    let mut meta = Vec::new();
    memcache::MetaReply::Value {
        data: &value,
        flags: memcache::MetaFlags::new(b"f0 O12345"),
    }
    .write(&mut meta);
    g.bench_function("parse_meta_va_100B", |b| {
        b.iter(|| memcache::parse_meta(black_box(&meta)).unwrap().unwrap())
    });
    let mut out = Vec::with_capacity(4096);
    g.bench_function("encode_set_100B", |b| {
        b.iter(|| {
            out.clear();
            memcache::set(
                &mut out,
                black_box(b"user6284781860667377211"),
                0,
                0,
                black_box(&value),
                false,
            );
            out.len()
        })
    });
    let k = memcache::Ketama::unweighted(&["10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211"]);
    g.bench_function("ketama_lookup", |b| {
        b.iter(|| k.server_for(black_box(b"user6284781860667377211")))
    });
    let keys: Vec<&[u8]> = vec![b"{user1000}.following", b"user6284781860667377211"];
    g.bench_function("key_slot", |b| {
        b.iter(|| resp::key_slot(black_box(keys[1])))
    });
    g.finish();
}

criterion_group!(benches, bench_resp, bench_memcache);
criterion_main!(benches);
