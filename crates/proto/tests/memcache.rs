//! memcached: protocol.txt examples, encoder round trips, fragmentation, malformed input,
//! ketama.

use kvlab_proto::memcache::{
    self, Ketama, Limits, MetaFlag, MetaFlags, MetaReply, Reply, Request, StoreCommand,
};
use kvlab_proto::ErrorKind;

fn text(buf: &[u8]) -> Reply<'_> {
    let (r, n) = memcache::parse(buf)
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("incomplete: {:?}", String::from_utf8_lossy(buf)));
    assert_eq!(
        n,
        buf.len(),
        "consumed of {:?}",
        String::from_utf8_lossy(buf)
    );
    r
}

fn meta(buf: &[u8]) -> MetaReply<'_> {
    let (r, n) = memcache::parse_meta(buf)
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("incomplete: {:?}", String::from_utf8_lossy(buf)));
    assert_eq!(
        n,
        buf.len(),
        "consumed of {:?}",
        String::from_utf8_lossy(buf)
    );
    r
}

fn request(buf: &[u8]) -> Request<'_> {
    let (r, n) = memcache::parse_request(buf)
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("incomplete: {:?}", String::from_utf8_lossy(buf)));
    assert_eq!(
        n,
        buf.len(),
        "consumed of {:?}",
        String::from_utf8_lossy(buf)
    );
    r
}

fn enc(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut out = Vec::new();
    f(&mut out);
    out
}

// ---- Known byte-level examples (memcached's protocol.txt) ----

#[test]
fn text_replies_from_protocol_txt() {
    let buf = b"VALUE foo 0 3\r\nbar\r\nVALUE baz 42 0 98765\r\n\r\nEND\r\n";
    let (a, n) = memcache::parse(buf).unwrap().unwrap();
    assert_eq!(
        a,
        Reply::Value {
            key: b"foo",
            flags: 0,
            data: b"bar",
            cas: None
        }
    );
    let (b, m) = memcache::parse(&buf[n..]).unwrap().unwrap();
    assert_eq!(
        b,
        Reply::Value {
            key: b"baz",
            flags: 42,
            data: b"",
            cas: Some(98765)
        }
    );
    assert_eq!(memcache::parse(&buf[n + m..]), Ok(Some((Reply::End, 5))));

    // Binary-safe data: CR and LF inside the block do not end it.
    assert_eq!(
        text(b"VALUE k 4294967295 7\r\n\r\nEND\r\n\r\n"),
        Reply::Value {
            key: b"k",
            flags: u32::MAX,
            data: b"\r\nEND\r\n",
            cas: None
        }
    );
    for (bytes, want) in [
        (&b"STORED\r\n"[..], Reply::Stored),
        (b"NOT_STORED\r\n", Reply::NotStored),
        (b"EXISTS\r\n", Reply::Exists),
        (b"NOT_FOUND\r\n", Reply::NotFound),
        (b"DELETED\r\n", Reply::Deleted),
        (b"TOUCHED\r\n", Reply::Touched),
        (b"OK\r\n", Reply::Ok),
        (b"RESET\r\n", Reply::Reset),
        (b"END\r\n", Reply::End),
        (b"ERROR\r\n", Reply::Error),
        (b"ERROR unknown command\r\n", Reply::Error),
        (
            b"CLIENT_ERROR bad data chunk\r\n",
            Reply::ClientError(b"bad data chunk"),
        ),
        (b"CLIENT_ERROR\r\n", Reply::ClientError(b"")),
        (
            b"SERVER_ERROR out of memory storing object\r\n",
            Reply::ServerError(b"out of memory storing object"),
        ),
        (b"VERSION 1.6.21\r\n", Reply::Version(b"1.6.21")),
        (
            b"STAT pid 1234\r\n",
            Reply::Stat {
                name: b"pid",
                value: b"1234",
            },
        ),
        (
            b"STAT version 1.6.21 extra\r\n",
            Reply::Stat {
                name: b"version",
                value: b"1.6.21 extra",
            },
        ),
        (b"42\r\n", Reply::Number(42)),
        (b"18446744073709551615\r\n", Reply::Number(u64::MAX)),
    ] {
        assert_eq!(text(bytes), want);
        let error_line = [&b"ERROR"[..], b"CLIENT_ERROR", b"SERVER_ERROR"]
            .iter()
            .any(|p| bytes.starts_with(p));
        assert_eq!(want.is_error(), error_line);
        // Writing the reply back gives bytes that parse the same.
        let again = enc(|o| want.write(o));
        assert_eq!(text(&again), want);
    }
}

#[test]
fn meta_replies_from_protocol_txt() {
    let r = meta(b"VA 3 s3 t-1 f5 c99 Oab kfoo\r\nbar\r\n");
    let MetaReply::Value { data, flags } = r else {
        panic!("{r:?}")
    };
    assert_eq!(data, b"bar");
    assert_eq!(flags.size(), Some(3));
    assert_eq!(flags.ttl(), Some(-1));
    assert_eq!(flags.client_flags(), Some(5));
    assert_eq!(flags.cas(), Some(99));
    assert_eq!(flags.opaque(), Some(&b"ab"[..]));
    assert_eq!(flags.key(), Some(&b"foo"[..]));
    assert!(flags.has(b's') && !flags.has(b'v'));
    assert_eq!(flags.get(b'z'), None);
    assert_eq!(
        flags.iter().map(|(f, _)| f).collect::<Vec<_>>(),
        b"stfcOk".to_vec()
    );

    assert_eq!(
        meta(b"VA 0\r\n\r\n"),
        MetaReply::Value {
            data: b"",
            flags: MetaFlags::new(b"")
        }
    );
    assert!(meta(b"VA 2\r\n\r\n\r\n").flags().unwrap().is_empty());
    assert_eq!(meta(b"HD\r\n"), MetaReply::Hit(MetaFlags::new(b"")));
    let hd = meta(b"HD c123 O7\r\n");
    assert_eq!(hd.flags().unwrap().cas(), Some(123));
    assert_eq!(hd.flags().unwrap().opaque(), Some(&b"7"[..]));
    assert_eq!(meta(b"EN\r\n"), MetaReply::Miss(MetaFlags::new(b"")));
    assert_eq!(meta(b"NF\r\n"), MetaReply::NotFound(MetaFlags::new(b"")));
    assert_eq!(meta(b"NS\r\n"), MetaReply::NotStored(MetaFlags::new(b"")));
    assert_eq!(
        meta(b"EX O9\r\n").flags().unwrap().opaque(),
        Some(&b"9"[..])
    );
    assert_eq!(meta(b"MN\r\n"), MetaReply::NoOp);
    assert_eq!(
        meta(b"ME foo exp=-1 la=2 cas=3 fetch=no cls=1 size=63\r\n"),
        MetaReply::Debug(b"foo exp=-1 la=2 cas=3 fetch=no cls=1 size=63")
    );
    assert_eq!(meta(b"ERROR\r\n"), MetaReply::Error);
    assert!(meta(b"CLIENT_ERROR bad command line format\r\n").is_error());
    assert_eq!(
        meta(b"SERVER_ERROR out of memory\r\n"),
        MetaReply::ServerError(b"out of memory")
    );
    // Repeated spaces between flags are tolerated.
    assert_eq!(
        MetaFlags::new(b" O1  k2 ").iter().collect::<Vec<_>>(),
        [(b'O', &b"1"[..]), (b'k', &b"2"[..])]
    );
}

#[test]
fn meta_replies_write_back() {
    for sample in meta_samples() {
        let r = meta(&sample);
        assert_eq!(enc(|o| r.write(o)), sample, "{r:?}");
    }
}

// ---- Encoders, round-tripped through the request parser ----

#[test]
fn text_encoders_round_trip() {
    let v = b"binary\r\nvalue\0".to_vec();
    assert_eq!(enc(|o| memcache::get(o, b"foo")), b"get foo\r\n");
    assert_eq!(
        enc(|o| memcache::set(o, b"foo", 5, 300, b"bar", false)),
        b"set foo 5 300 3\r\nbar\r\n"
    );
    assert_eq!(
        enc(|o| memcache::cas(o, b"foo", 0, 0, b"", 77, true)),
        b"cas foo 0 0 0 77 noreply\r\n\r\n"
    );
    let keys = |r: Request<'_>| match r {
        Request::Get { keys, cas } => (keys.iter().map(<[u8]>::to_vec).collect::<Vec<_>>(), cas),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        keys(request(&enc(|o| memcache::get(o, b"k1")))),
        (vec![b"k1".to_vec()], false)
    );
    assert_eq!(
        keys(request(&enc(|o| memcache::get_multi(o, &["a", "b", "c"])))),
        (vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()], false)
    );
    assert_eq!(
        keys(request(&enc(|o| memcache::gets(o, b"k1")))),
        (vec![b"k1".to_vec()], true)
    );
    assert_eq!(
        keys(request(&enc(|o| memcache::gets_multi(o, &[b"x", b"y"])))),
        (vec![b"x".to_vec(), b"y".to_vec()], true)
    );

    type StoreFn = fn(&mut Vec<u8>, &[u8], u32, u32, &[u8], bool);
    let stores: [(StoreFn, StoreCommand); 3] = [
        (memcache::set, StoreCommand::Set),
        (memcache::add, StoreCommand::Add),
        (memcache::replace, StoreCommand::Replace),
    ];
    for (f, cmd) in stores {
        for noreply in [false, true] {
            let bytes = enc(|o| f(o, b"key", 7, 3600, &v, noreply));
            assert_eq!(
                request(&bytes),
                Request::Store {
                    cmd,
                    key: b"key",
                    flags: 7,
                    exptime: 3600,
                    data: &v,
                    cas: None,
                    noreply
                }
            );
        }
    }
    let bytes = enc(|o| memcache::cas(o, b"key", u32::MAX, 1, &v, u64::MAX, false));
    assert_eq!(
        request(&bytes),
        Request::Store {
            cmd: StoreCommand::Cas,
            key: b"key",
            flags: u32::MAX,
            exptime: 1,
            data: &v,
            cas: Some(u64::MAX),
            noreply: false
        }
    );
    for noreply in [false, true] {
        assert_eq!(
            request(&enc(|o| memcache::delete(o, b"k", noreply))),
            Request::Delete { key: b"k", noreply }
        );
        assert_eq!(
            request(&enc(|o| memcache::touch(o, b"k", 60, noreply))),
            Request::Touch {
                key: b"k",
                exptime: 60,
                noreply
            }
        );
        assert_eq!(
            request(&enc(|o| memcache::incr(o, b"k", 5, noreply))),
            Request::Arith {
                incr: true,
                key: b"k",
                delta: 5,
                noreply
            }
        );
        assert_eq!(
            request(&enc(|o| memcache::decr(o, b"k", u64::MAX, noreply))),
            Request::Arith {
                incr: false,
                key: b"k",
                delta: u64::MAX,
                noreply
            }
        );
        assert_eq!(
            request(&enc(|o| memcache::flush_all(o, noreply))),
            Request::FlushAll {
                delay: None,
                noreply
            }
        );
    }
    assert_eq!(request(&enc(memcache::version)), Request::Version);
    assert_eq!(
        request(&enc(|o| memcache::stats(o, None))),
        Request::Stats(None)
    );
    assert_eq!(
        request(&enc(|o| memcache::stats(o, Some(b"slabs")))),
        Request::Stats(Some(b"slabs"))
    );
    assert_eq!(
        request(b"flush_all 10 noreply\r\n"),
        Request::FlushAll {
            delay: Some(10),
            noreply: true
        }
    );
}

#[test]
fn meta_encoders_round_trip() {
    let flags = [
        MetaFlag::Flag(b'v'),
        MetaFlag::Flag(b'f'),
        MetaFlag::Num(b'T', 30),
        MetaFlag::Token(b'O', b"op-1"),
    ];
    let bytes = enc(|o| memcache::mg(o, b"foo", &flags));
    assert_eq!(bytes, b"mg foo v f T30 Oop-1\r\n");
    let Request::MetaGet { key, flags: got } = request(&bytes) else {
        panic!()
    };
    assert_eq!(key, b"foo");
    assert_eq!(got.opaque(), Some(&b"op-1"[..]));
    assert_eq!(got.get(b'T'), Some(&b"30"[..]));
    assert!(got.has(b'v') && got.has(b'f'));

    let data = b"a\r\nb".to_vec();
    let bytes = enc(|o| {
        memcache::ms(
            o,
            b"foo",
            &data,
            &[
                MetaFlag::Num(b'T', 0),
                MetaFlag::Token(b'M', b"E"),
                MetaFlag::Flag(b'q'),
            ],
        )
    });
    assert_eq!(bytes, b"ms foo 4 T0 ME q\r\na\r\nb\r\n");
    let Request::MetaSet {
        key,
        data: got,
        flags,
    } = request(&bytes)
    else {
        panic!()
    };
    assert_eq!((key, got), (&b"foo"[..], &data[..]));
    assert_eq!(flags.get(b'M'), Some(&b"E"[..]));
    assert!(flags.has(b'q'));
    assert_eq!(enc(|o| memcache::ms(o, b"k", b"", &[])), b"ms k 0\r\n\r\n");

    let bytes = enc(|o| memcache::md(o, b"foo", &[MetaFlag::Flag(b'q'), MetaFlag::Flag(b'I')]));
    assert_eq!(bytes, b"md foo q I\r\n");
    assert!(
        matches!(request(&bytes), Request::MetaDelete { key: b"foo", flags } if flags.has(b'I'))
    );
    assert_eq!(enc(|o| memcache::mg(o, b"k", &[])), b"mg k\r\n");
    assert_eq!(request(&enc(memcache::mn)), Request::MetaNoop);
}

#[test]
fn quiet_meta_pipeline_ends_with_mn() {
    // mg q for three keys, then mn: only hits are answered, then MN.
    let mut out = Vec::new();
    for k in ["a", "b", "c"] {
        memcache::mg(
            &mut out,
            k.as_bytes(),
            &[
                MetaFlag::Flag(b'v'),
                MetaFlag::Flag(b'q'),
                MetaFlag::Flag(b'k'),
            ],
        );
    }
    memcache::mn(&mut out);
    let mut n = 0;
    let mut pos = 0;
    while let Some((_, used)) = memcache::parse_request(&out[pos..]).unwrap() {
        pos += used;
        n += 1;
    }
    assert_eq!((n, pos), (4, out.len()));
    let replies = b"VA 1 ka\r\n1\r\nVA 1 kc\r\n3\r\nMN\r\n";
    let mut pos = 0;
    let mut keys = Vec::new();
    loop {
        let (r, used) = memcache::parse_meta(&replies[pos..]).unwrap().unwrap();
        pos += used;
        match r {
            MetaReply::Value { flags, .. } => keys.push(flags.key().unwrap().to_vec()),
            MetaReply::NoOp => break,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(keys, [b"a".to_vec(), b"c".to_vec()]);
}

#[test]
fn key_validity() {
    assert!(memcache::is_valid_key(b"user:1234"));
    assert!(memcache::is_valid_key(&[b'k'; 250]));
    assert!(!memcache::is_valid_key(&[b'k'; 251]));
    assert!(!memcache::is_valid_key(b""));
    assert!(!memcache::is_valid_key(b"a b"));
    assert!(!memcache::is_valid_key(b"a\r\n"));
    assert!(!memcache::is_valid_key(b"a\x7f"));
}

// ---- Fragmentation ----

fn text_samples() -> Vec<Vec<u8>> {
    [
        &b"VALUE foo 0 3\r\nbar\r\n"[..],
        b"VALUE k 1 7 99\r\n\r\nEND\r\n\r\n",
        b"VALUE e 0 0\r\n\r\n",
        b"END\r\n",
        b"STORED\r\n",
        b"NOT_STORED\r\n",
        b"EXISTS\r\n",
        b"NOT_FOUND\r\n",
        b"DELETED\r\n",
        b"TOUCHED\r\n",
        b"OK\r\n",
        b"VERSION 1.6.21\r\n",
        b"STAT curr_items 10\r\n",
        b"12345\r\n",
        b"ERROR\r\n",
        b"CLIENT_ERROR line too long\r\n",
        b"SERVER_ERROR busy\r\n",
    ]
    .iter()
    .map(|s| s.to_vec())
    .collect()
}

fn meta_samples() -> Vec<Vec<u8>> {
    [
        &b"VA 3 f0 Oab\r\nbar\r\n"[..],
        b"VA 4\r\n\r\n\r\n\r\n",
        b"HD\r\n",
        b"HD c5 kfoo\r\n",
        b"EN\r\n",
        b"NF O1\r\n",
        b"NS\r\n",
        b"EX\r\n",
        b"MN\r\n",
        b"ME k exp=1\r\n",
        b"CLIENT_ERROR bad\r\n",
    ]
    .iter()
    .map(|s| s.to_vec())
    .collect()
}

type Incomplete = fn(&[u8]) -> Option<Option<usize>>;

fn text_used(b: &[u8]) -> Option<Option<usize>> {
    memcache::parse(b).ok().map(|r| r.map(|(_, n)| n))
}
fn meta_used(b: &[u8]) -> Option<Option<usize>> {
    memcache::parse_meta(b).ok().map(|r| r.map(|(_, n)| n))
}
fn request_used(b: &[u8]) -> Option<Option<usize>> {
    memcache::parse_request(b).ok().map(|r| r.map(|(_, n)| n))
}

fn request_samples() -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    memcache::get_multi(&mut v, &["a", "bb"]);
    let mut all = vec![v];
    all.push(enc(|o| memcache::set(o, b"k", 1, 2, b"x\r\ny", false)));
    all.push(enc(|o| memcache::cas(o, b"k", 1, 2, b"", 9, true)));
    all.push(enc(|o| memcache::delete(o, b"k", false)));
    all.push(enc(|o| {
        memcache::ms(o, b"k", b"data", &[MetaFlag::Num(b'T', 5)])
    }));
    all.push(enc(|o| memcache::mg(o, b"k", &[MetaFlag::Flag(b'v')])));
    all.push(enc(memcache::mn));
    all
}

/// Every proper prefix is incomplete, the whole parses; then the concatenation, split at
/// every byte and fed through a read loop, yields the samples.
fn check_fragmentation(samples: &[Vec<u8>], used: Incomplete) {
    for s in samples {
        for cut in 0..s.len() {
            assert_eq!(
                used(&s[..cut]),
                Some(None),
                "{cut}-byte prefix of {:?}",
                String::from_utf8_lossy(s)
            );
        }
        assert_eq!(
            used(s),
            Some(Some(s.len())),
            "{:?}",
            String::from_utf8_lossy(s)
        );
    }
    let stream = samples.concat();
    for cut in 0..=stream.len() {
        let mut buf = Vec::new();
        let mut got = Vec::new();
        for chunk in [&stream[..cut], &stream[cut..]] {
            buf.extend_from_slice(chunk);
            let mut pos = 0;
            while let Some(Some(n)) = used(&buf[pos..]) {
                got.push(buf[pos..pos + n].to_vec());
                pos += n;
            }
            assert_eq!(used(&buf[pos..]), Some(None), "split at {cut}");
            buf.drain(..pos);
        }
        assert_eq!(got, samples, "split at {cut}");
    }
}

#[test]
fn text_replies_fragment_and_reassemble() {
    check_fragmentation(&text_samples(), text_used);
}

#[test]
fn meta_replies_fragment_and_reassemble() {
    check_fragmentation(&meta_samples(), meta_used);
}

#[test]
fn requests_fragment_and_reassemble() {
    check_fragmentation(&request_samples(), request_used);
}

// ---- Malformed input ----

#[test]
fn malformed_text_replies() {
    let long = [b"VALUE ".as_slice(), &[b'k'; 3000]].concat();
    let cases: Vec<(&[u8], ErrorKind)> = vec![
        (b"HELLO\r\n", ErrorKind::UnknownKeyword),
        (b"X", ErrorKind::UnknownKeyword),
        (b"STOREX", ErrorKind::UnknownKeyword),
        (b"\r\n", ErrorKind::UnknownKeyword),
        (b"END\n", ErrorKind::MissingCrlf),
        (b"\n", ErrorKind::MissingCrlf),
        (b"END \r\n", ErrorKind::UnknownKeyword),
        (&long, ErrorKind::LineTooLong),
        (b"VALUE foo x 3\r\nbar\r\n", ErrorKind::BadValue),
        (b"VALUE foo 4294967296 3\r\nbar\r\n", ErrorKind::BadValue),
        (b"VALUE foo 0 -3\r\n", ErrorKind::BadValue),
        (b"VALUE foo 0\r\n", ErrorKind::BadValue),
        (b"VALUE  0 3\r\nbar\r\n", ErrorKind::BadValue),
        (b"VALUE foo 0 3 x\r\nbar\r\n", ErrorKind::BadValue),
        (b"VALUE foo 0 3 1 2\r\nbar\r\n", ErrorKind::BadValue),
        (b"VALUE foo 0 3\r\nbarX\r\n", ErrorKind::MissingCrlf),
        (b"VALUE foo 0 3\r\nbar\rX", ErrorKind::MissingCrlf),
        (b"VALUE foo 0 99999999999\r\n", ErrorKind::TooLarge),
        (b"STAT \r\n", ErrorKind::BadValue),
        (b"123x\r\n", ErrorKind::BadValue),
        (b"99999999999999999999999\r\n", ErrorKind::BadValue),
    ];
    for (input, kind) in cases {
        let e = memcache::parse(input).expect_err(&String::from_utf8_lossy(input));
        assert_eq!(
            e.kind(),
            kind,
            "{e} for {:?}",
            String::from_utf8_lossy(input)
        );
    }
    assert_eq!(
        memcache::parse(b"HELLO\r\n").unwrap_err().to_string(),
        "memcached text: expected a reply keyword (VALUE, END, STORED, NOT_STORED, EXISTS, \
         NOT_FOUND, DELETED, TOUCHED, OK, RESET, VERSION, STAT, ERROR, CLIENT_ERROR, \
         SERVER_ERROR) or a number, found the line \"HELLO\" at offset 0"
    );
    assert_eq!(
        memcache::parse(b"VALUE foo 0 3\r\nbarX\r\n")
            .unwrap_err()
            .to_string(),
        "memcached text: expected CRLF after a VALUE data block, found 0x58 ('X') at offset 18"
    );
    // Custom limits.
    let lim = Limits {
        max_line_len: 8,
        max_value_len: 2,
    };
    assert!(memcache::parse_with(b"STORED\r\n", &lim).unwrap().is_some());
    assert_eq!(
        memcache::parse_with(b"NOT_STORED", &lim)
            .unwrap_err()
            .kind(),
        ErrorKind::LineTooLong
    );
    assert_eq!(memcache::parse_with(b"NOT_STOR", &lim), Ok(None));
    assert_eq!(
        memcache::parse_with(
            b"VALUE k 0 3\r\n",
            &Limits {
                max_value_len: 2,
                ..Limits::DEFAULT
            }
        )
        .unwrap_err()
        .kind(),
        ErrorKind::TooLarge
    );
    // 2048 bytes of line content are fine; with no LF after 2050 bytes it is an error.
    let mut ok = b"SERVER_ERROR ".to_vec();
    ok.resize(2048, b'x');
    assert_eq!(memcache::parse(&ok), Ok(None));
    ok.extend_from_slice(b"\r\n");
    assert!(memcache::parse(&ok).unwrap().is_some());
    ok.truncate(2048);
    ok.extend_from_slice(b"xx");
    assert_eq!(
        memcache::parse(&ok).unwrap_err().kind(),
        ErrorKind::LineTooLong
    );
}

#[test]
fn malformed_meta_replies_and_requests() {
    for (input, kind) in [
        (&b"VALUE foo 0 3\r\n"[..], ErrorKind::UnknownKeyword),
        (b"END\r\n", ErrorKind::UnknownKeyword),
        (b"XX\r\n", ErrorKind::UnknownKeyword),
        (b"VA\r\n", ErrorKind::BadValue),
        (b"VA x\r\n", ErrorKind::BadValue),
        (b"VA 3\r\nabcd", ErrorKind::MissingCrlf),
        (b"VA 99999999999\r\n", ErrorKind::TooLarge),
        (b"MN x\r\n", ErrorKind::BadValue),
        (b"HD\n", ErrorKind::MissingCrlf),
    ] {
        let e = memcache::parse_meta(input).expect_err(&String::from_utf8_lossy(input));
        assert_eq!(
            e.kind(),
            kind,
            "{e} for {:?}",
            String::from_utf8_lossy(input)
        );
    }
    for (input, kind) in [
        (&b"GET foo\r\n"[..], ErrorKind::UnknownKeyword),
        (b"get\r\n", ErrorKind::BadValue),
        (b"get \r\n", ErrorKind::BadValue),
        (b"set k 0 0\r\n", ErrorKind::BadValue),
        (b"set k 0 0 x\r\n", ErrorKind::BadValue),
        (b"set k 0 0 1 2\r\nx\r\n", ErrorKind::BadValue),
        (b"cas k 0 0 1\r\nx\r\n", ErrorKind::BadValue),
        (b"set k 0 0 1\r\nxy\r\n", ErrorKind::MissingCrlf),
        (b"delete\r\n", ErrorKind::BadValue),
        (b"delete a b\r\n", ErrorKind::BadValue),
        (b"touch k\r\n", ErrorKind::BadValue),
        (b"incr k -1\r\n", ErrorKind::BadValue),
        (b"flush_all x\r\n", ErrorKind::BadValue),
        (b"ms k\r\n", ErrorKind::BadValue),
        (b"mg \r\n", ErrorKind::BadValue),
        (b"mn x\r\n", ErrorKind::UnknownKeyword),
    ] {
        let e = memcache::parse_request(input).expect_err(&String::from_utf8_lossy(input));
        assert_eq!(
            e.kind(),
            kind,
            "{e} for {:?}",
            String::from_utf8_lossy(input)
        );
    }
}

// ---- Ketama ----

fn keys(n: usize) -> impl Iterator<Item = Vec<u8>> {
    (0..n).map(|i| format!("user{i}").into_bytes())
}

#[test]
fn ketama_matches_a_reference_implementation() {
    // Expected servers computed with uhashring's KetamaRing (Python), an independent
    // implementation of libketama's continuum.
    let k = Ketama::unweighted(&["10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211"]);
    assert_eq!(k.point_count(), 480);
    let got: Vec<usize> = (0..40)
        .map(|i| k.server_for(format!("key{i}").as_bytes()).unwrap())
        .collect();
    assert_eq!(
        got,
        [
            2, 0, 2, 0, 1, 0, 2, 2, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 1, 1, 2, 1, 2, 0, 0, 0, 1, 1,
            2, 2, 1, 0, 2, 0, 1, 2, 0, 1, 1
        ]
    );
    assert_eq!(
        (0..5)
            .map(|i| Ketama::hash(format!("key{i}").as_bytes()))
            .collect::<Vec<_>>(),
        [4060279841, 2497097154, 2854615160, 2237083958, 1273231562]
    );
    let k = Ketama::new(&[
        ("a.example:11211", 1),
        ("b.example:11211", 2),
        ("c.example:11211", 5),
    ]);
    assert_eq!(k.point_count(), 480);
    let got: Vec<usize> = (0..40)
        .map(|i| k.server_for(format!("user{i}").as_bytes()).unwrap())
        .collect();
    assert_eq!(
        got,
        [
            2, 2, 2, 0, 2, 1, 0, 2, 1, 2, 2, 2, 2, 2, 2, 0, 2, 2, 2, 0, 2, 1, 2, 1, 2, 0, 1, 1, 0,
            2, 1, 0, 0, 0, 1, 2, 2, 1, 2, 2
        ]
    );
    assert_eq!(k.server_name(2), Some("c.example:11211"));
    assert_eq!(k.server_count(), 3);
}

#[test]
fn ketama_spreads_keys_evenly() {
    let k = Ketama::unweighted(&["10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211"]);
    let mut counts = [0usize; 3];
    for key in keys(30_000) {
        counts[k.server_for(&key).unwrap()] += 1;
    }
    for c in counts {
        assert!((7_500..12_500).contains(&c), "{counts:?}");
    }
}

#[test]
fn ketama_adding_a_server_moves_about_a_quarter() {
    let three = ["10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211"];
    let four = [
        "10.0.0.1:11211",
        "10.0.0.2:11211",
        "10.0.0.3:11211",
        "10.0.0.4:11211",
    ];
    let (k3, k4) = (Ketama::unweighted(&three), Ketama::unweighted(&four));
    let n = 30_000;
    let mut moved = 0;
    for key in keys(n) {
        let (a, b) = (k3.server_for(&key).unwrap(), k4.server_for(&key).unwrap());
        if a != b {
            moved += 1;
            // Keys only move to the new server.
            assert_eq!(b, 3);
        }
    }
    let frac = moved as f64 / n as f64;
    assert!((0.17..0.33).contains(&frac), "{frac}");
}

// ---- Binary protocol ----

mod binary_protocol {
    use kvlab_proto::memcache::binary::{self, Opcode, Response, Status, HEADER_LEN};
    use kvlab_proto::ErrorKind;

    /// A response as memcached writes it.
    fn response(
        opcode: Opcode,
        status: Status,
        opaque: u32,
        extras: &[u8],
        key: &[u8],
        value: &[u8],
    ) -> Vec<u8> {
        let mut out = Vec::new();
        Response {
            opcode,
            status,
            opaque,
            cas: 0,
            extras,
            key,
            value,
        }
        .write(&mut out);
        out
    }

    /// A parsed response's opcode, status, opaque, key and value, owned.
    type Parsed = (Opcode, Status, u32, Vec<u8>, Vec<u8>);

    /// Parses a stream fed `chunk` bytes at a time, as a connection reads it: every
    /// response.
    fn parse_in_chunks(stream: &[u8], chunk: usize) -> Vec<Parsed> {
        let mut buf = Vec::new();
        let mut got = Vec::new();
        for piece in stream.chunks(chunk) {
            buf.extend_from_slice(piece);
            let mut pos = 0;
            while let Some((r, n)) = binary::parse(&buf[pos..]).unwrap() {
                got.push((
                    r.opcode,
                    r.status,
                    r.opaque,
                    r.key.to_vec(),
                    r.value.to_vec(),
                ));
                pos += n;
            }
            buf.drain(..pos);
        }
        assert!(buf.is_empty(), "{} bytes left over", buf.len());
        got
    }

    #[test]
    fn requests_are_laid_out_as_memcached_reads_them() {
        let mut out = Vec::new();
        binary::get(&mut out, b"foo", 1);
        assert_eq!(
            out,
            [
                0x80, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00,
                0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, b'f', b'o', b'o'
            ]
        );
        out.clear();
        binary::getkq(&mut out, b"a b\x01", 5);
        assert_eq!(out[1], 0x0d);
        assert_eq!(&out[HEADER_LEN..], b"a b\x01", "binary keys go as they are");
        out.clear();
        binary::delete(&mut out, b"k", 0);
        assert_eq!((out[1], out.len()), (0x04, HEADER_LEN + 1));
        out.clear();
        binary::noop(&mut out, 3);
        assert_eq!((out[1], out.len()), (0x0a, HEADER_LEN));
        out.clear();
        binary::stat(&mut out, None, 0);
        assert_eq!((out[1], out.len()), (0x10, HEADER_LEN));
    }

    #[test]
    fn a_pipelined_stream_parses_the_same_in_any_fragmentation() {
        let mut stream = Vec::new();
        stream.extend(response(
            Opcode::GET,
            Status::OK,
            1,
            &[0, 0, 0, 9],
            b"",
            b"hello",
        ));
        stream.extend(response(
            Opcode::GET,
            Status::KEY_NOT_FOUND,
            2,
            b"",
            b"",
            b"Not found",
        ));
        stream.extend(response(Opcode::SET, Status::OK, 3, b"", b"", b""));
        stream.extend(response(
            Opcode::GETKQ,
            Status::OK,
            4,
            &[0; 4],
            b"k1",
            &[7u8; 3000],
        ));
        stream.extend(response(Opcode::NOOP, Status::OK, 5, b"", b"", b""));
        stream.extend(response(
            Opcode::DELETE,
            Status::KEY_NOT_FOUND,
            6,
            b"",
            b"",
            b"",
        ));
        let whole = parse_in_chunks(&stream, stream.len());
        assert_eq!(whole.len(), 6);
        assert_eq!(whole[0].4, b"hello");
        assert_eq!(
            whole[1].1,
            Status::KEY_NOT_FOUND,
            "a miss is a status, not an error"
        );
        assert_eq!(
            (whole[3].3.as_slice(), whole[3].4.len()),
            (&b"k1"[..], 3000)
        );
        for chunk in [1, 2, 3, 7, 23, 24, 25, 100, 1000] {
            assert_eq!(parse_in_chunks(&stream, chunk), whole, "chunks of {chunk}");
        }
        // Every proper prefix of a response is incomplete, never an error.
        let one = response(Opcode::GET, Status::OK, 1, &[0, 0, 0, 9], b"", b"hello");
        for cut in 0..one.len() {
            assert_eq!(binary::parse(&one[..cut]), Ok(None), "cut at {cut}");
        }
        let (r, n) = binary::parse(&one).unwrap().unwrap();
        assert_eq!((r.item_flags(), n), (Some(9), one.len()));
    }

    #[test]
    fn malformed_responses_are_clear_errors() {
        // A text reply where a binary one was expected fails on its first byte.
        let e = binary::parse(b"E").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::UnexpectedByte);
        assert!(e.to_string().contains("memcached binary"), "{e}");
        assert!(e.to_string().contains("0x81"), "{e}");
        // A request echoed back is not a response.
        let mut req = Vec::new();
        binary::get(&mut req, b"k", 0);
        assert_eq!(
            binary::parse(&req).unwrap_err().kind(),
            ErrorKind::UnexpectedByte
        );
        // Extras and key longer than the body.
        let mut bad = response(Opcode::GET, Status::OK, 0, &[0; 4], b"", b"");
        bad[2..4].copy_from_slice(&10u16.to_be_bytes());
        let e = binary::parse(&bad).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::BadValue);
        assert!(e.to_string().contains("within the body length"), "{e}");
        // A body above the limit fails before it arrives.
        let mut huge = response(Opcode::GET, Status::OK, 0, b"", b"", b"");
        huge[8..12].copy_from_slice(&u32::MAX.to_be_bytes());
        assert_eq!(
            binary::parse(&huge).unwrap_err().kind(),
            ErrorKind::TooLarge
        );
        // A data type other than raw bytes.
        let mut typed = response(Opcode::GET, Status::OK, 0, b"", b"", b"");
        typed[5] = 1;
        assert!(binary::parse(&typed[..6]).is_err());
    }

    #[test]
    fn statuses_read_as_memcached_names_them() {
        assert_eq!(
            Status::KEY_NOT_FOUND.to_string(),
            "key not found (status 0x0001)"
        );
        assert_eq!(Status(0x0082).text(), "out of memory");
        assert_eq!(format!("{:?}", Opcode::GETKQ), "GETKQ");
        assert_eq!(format!("{:?}", Opcode(0x42)), "Opcode(0x42)");
    }
}
