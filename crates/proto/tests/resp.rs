//! RESP: spec examples, encoder round trips, fragmentation, malformed input, cluster.

use kvlab_proto::resp::{self, Frame, Limits, RedirectKind, SlotRange};
use kvlab_proto::{ErrorKind, ProtoError};

/// Parses `buf` as exactly one frame.
fn one(buf: &[u8]) -> Frame<'_> {
    let (frame, n) = resp::parse(buf)
        .unwrap_or_else(|e| panic!("{e} in {:?}", String::from_utf8_lossy(buf)))
        .unwrap_or_else(|| panic!("incomplete: {:?}", String::from_utf8_lossy(buf)));
    assert_eq!(
        n,
        buf.len(),
        "consumed of {:?}",
        String::from_utf8_lossy(buf)
    );
    assert_eq!(resp::skip(buf), Ok(Some(n)));
    frame
}

fn err(buf: &[u8]) -> ProtoError {
    let e = resp::parse(buf).expect_err("an error");
    assert_eq!(resp::skip(buf), Err(e), "skip agrees with parse");
    e
}

/// The arguments of an encoded command: an array of bulk strings.
fn args(buf: &[u8]) -> Vec<Vec<u8>> {
    let Frame::Array(Some(a)) = one(buf) else {
        panic!("not an array: {:?}", String::from_utf8_lossy(buf))
    };
    a.iter()
        .map(|f| match f {
            Frame::Bulk(Some(b)) => b.to_vec(),
            other => panic!("not a bulk string: {other:?}"),
        })
        .collect()
}

fn strs(v: &[&str]) -> Vec<Vec<u8>> {
    v.iter().map(|s| s.as_bytes().to_vec()).collect()
}

// ---- Known byte-level examples (the Redis protocol spec) ----

#[test]
fn resp2_spec_examples() {
    assert_eq!(one(b"+OK\r\n"), Frame::SimpleString(b"OK"));
    assert_eq!(one(b"-Error message\r\n"), Frame::Error(b"Error message"));
    assert_eq!(
        one(b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n")
            .error_message(),
        Some(&b"WRONGTYPE Operation against a key holding the wrong kind of value"[..])
    );
    assert_eq!(one(b":0\r\n"), Frame::Integer(0));
    assert_eq!(one(b":1000\r\n"), Frame::Integer(1000));
    assert_eq!(one(b":-1000\r\n"), Frame::Integer(-1000));
    assert_eq!(one(b":+7\r\n"), Frame::Integer(7));
    assert_eq!(one(b":-9223372036854775808\r\n"), Frame::Integer(i64::MIN));
    assert_eq!(one(b"$5\r\nhello\r\n"), Frame::Bulk(Some(b"hello")));
    assert_eq!(one(b"$0\r\n\r\n"), Frame::Bulk(Some(b"")));
    assert_eq!(one(b"$-1\r\n"), Frame::Bulk(None));
    assert_eq!(one(b"*-1\r\n"), Frame::Array(None));
    assert!(one(b"$-1\r\n").is_nil());
    let empty = one(b"*0\r\n").as_aggregate().unwrap();
    assert!(empty.is_empty());
    assert_eq!(empty.iter().count(), 0);

    let a = one(b"*2\r\n$5\r\nhello\r\n$5\r\nworld\r\n")
        .as_aggregate()
        .unwrap();
    assert_eq!(
        a.iter().collect::<Vec<_>>(),
        [Frame::Bulk(Some(b"hello")), Frame::Bulk(Some(b"world"))]
    );
    let a = one(b"*3\r\n:1\r\n:2\r\n:3\r\n").as_aggregate().unwrap();
    assert_eq!(
        a.iter()
            .map(|f| f.as_integer().unwrap())
            .collect::<Vec<_>>(),
        [1, 2, 3]
    );
    let a = one(b"*5\r\n:1\r\n:2\r\n:3\r\n:4\r\n$5\r\nhello\r\n")
        .as_aggregate()
        .unwrap();
    assert_eq!(a.len(), 5);
    assert_eq!(a.iter().last(), Some(Frame::Bulk(Some(b"hello"))));

    let nested = one(b"*2\r\n*3\r\n:1\r\n:2\r\n:3\r\n*2\r\n+Hello\r\n-World\r\n");
    let outer: Vec<_> = nested.as_aggregate().unwrap().iter().collect();
    assert_eq!(outer.len(), 2);
    let first: Vec<_> = outer[0].as_aggregate().unwrap().iter().collect();
    assert_eq!(
        first,
        [Frame::Integer(1), Frame::Integer(2), Frame::Integer(3)]
    );
    let second: Vec<_> = outer[1].as_aggregate().unwrap().iter().collect();
    assert_eq!(
        second,
        [Frame::SimpleString(b"Hello"), Frame::Error(b"World")]
    );

    let with_nil = one(b"*3\r\n$5\r\nhello\r\n$-1\r\n$5\r\nworld\r\n");
    assert_eq!(
        with_nil.as_aggregate().unwrap().iter().collect::<Vec<_>>(),
        [
            Frame::Bulk(Some(b"hello")),
            Frame::Bulk(None),
            Frame::Bulk(Some(b"world"))
        ]
    );
    // Binary-safe bulk data.
    assert_eq!(one(b"$4\r\n\r\n\r\n\r\n"), Frame::Bulk(Some(b"\r\n\r\n")));
}

#[test]
fn resp3_spec_examples() {
    assert_eq!(one(b"_\r\n"), Frame::Null);
    assert_eq!(one(b"#t\r\n"), Frame::Boolean(true));
    assert_eq!(one(b"#f\r\n"), Frame::Boolean(false));
    assert_eq!(one(b",1.23\r\n"), Frame::Double(1.23));
    assert_eq!(one(b",10\r\n"), Frame::Double(10.0));
    assert_eq!(one(b",-1.5e3\r\n"), Frame::Double(-1500.0));
    assert_eq!(one(b",inf\r\n"), Frame::Double(f64::INFINITY));
    assert_eq!(one(b",-inf\r\n"), Frame::Double(f64::NEG_INFINITY));
    assert!(matches!(one(b",nan\r\n"), Frame::Double(x) if x.is_nan()));
    assert_eq!(
        one(b"(3492890328409238509324850943850943825024385\r\n"),
        Frame::BigNumber(b"3492890328409238509324850943850943825024385")
    );
    assert_eq!(one(b"(-5\r\n"), Frame::BigNumber(b"-5"));
    assert_eq!(
        one(b"!21\r\nSYNTAX invalid syntax\r\n"),
        Frame::BulkError(b"SYNTAX invalid syntax")
    );
    assert!(one(b"!21\r\nSYNTAX invalid syntax\r\n").is_error());
    assert_eq!(
        one(b"=15\r\ntxt:Some string\r\n"),
        Frame::VerbatimString {
            format: b"txt",
            text: b"Some string"
        }
    );

    let map = one(b"%2\r\n+first\r\n:1\r\n+second\r\n:2\r\n");
    let Frame::Map(m) = map else {
        panic!("{map:?}")
    };
    assert_eq!((m.len(), m.frame_count()), (2, 4));
    assert_eq!(
        m.pairs().collect::<Vec<_>>(),
        [
            (Frame::SimpleString(b"first"), Frame::Integer(1)),
            (Frame::SimpleString(b"second"), Frame::Integer(2))
        ]
    );

    let set = one(b"~5\r\n+orange\r\n+apple\r\n#t\r\n:100\r\n:999\r\n");
    let Frame::Set(s) = set else {
        panic!("{set:?}")
    };
    assert_eq!(
        s.iter().collect::<Vec<_>>(),
        [
            Frame::SimpleString(b"orange"),
            Frame::SimpleString(b"apple"),
            Frame::Boolean(true),
            Frame::Integer(100),
            Frame::Integer(999)
        ]
    );

    let push = one(b">4\r\n+pubsub\r\n+message\r\n+somechannel\r\n+this is the message\r\n");
    let Frame::Push(p) = push else {
        panic!("{push:?}")
    };
    assert_eq!(p.len(), 4);
    assert_eq!(
        p.iter().nth(3),
        Some(Frame::SimpleString(b"this is the message"))
    );
}

#[test]
fn attributes_are_skipped() {
    // The spec's example: an attribute before an array reply.
    let buf = b"|1\r\n+key-popularity\r\n%2\r\n$1\r\na\r\n,0.1923\r\n$1\r\nb\r\n,0.0012\r\n\
                *2\r\n:2039123\r\n:9543892\r\n";
    let frame = one(buf);
    assert_eq!(
        frame.as_aggregate().unwrap().iter().collect::<Vec<_>>(),
        [Frame::Integer(2039123), Frame::Integer(9543892)]
    );
    // Inside an aggregate, before an element: not counted as an element.
    let buf = b"*2\r\n:1\r\n|1\r\n+ttl\r\n:3600\r\n:2\r\n";
    let a = one(buf).as_aggregate().unwrap();
    assert_eq!(
        a.iter().collect::<Vec<_>>(),
        [Frame::Integer(1), Frame::Integer(2)]
    );
    // An empty attribute; an attribute with nothing after it yet is incomplete.
    assert_eq!(one(b"|0\r\n:5\r\n"), Frame::Integer(5));
    assert_eq!(resp::parse(b"|1\r\n+a\r\n+b\r\n"), Ok(None));
}

// ---- Encoders, round-tripped through the parser ----

#[test]
fn command_builder_and_slice_encoder() {
    let mut out = Vec::new();
    resp::Command::new(&mut out, 6)
        .arg(b"SET")
        .arg(b"k")
        .arg_u64(0)
        .arg_u64(u64::MAX)
        .arg_i64(-42)
        .arg_f64(1.5);
    assert_eq!(
        args(&out),
        strs(&["SET", "k", "0", "18446744073709551615", "-42", "1.5"])
    );

    let mut out = Vec::new();
    let mut cmd = resp::Command::new(&mut out, 2);
    assert_eq!(cmd.remaining(), 2);
    cmd.arg(b"ECHO");
    cmd.arg(b"bin\r\n\0ary");
    assert_eq!(cmd.remaining(), 0);
    assert_eq!(args(&out), [b"ECHO".to_vec(), b"bin\r\n\0ary".to_vec()]);

    let mut out = Vec::new();
    resp::encode_command(&mut out, &["RPUSH", "list", "", "x"]);
    assert_eq!(args(&out), strs(&["RPUSH", "list", "", "x"]));
    let mut out = Vec::new();
    resp::encode_command::<&[u8]>(&mut out, &[]);
    assert_eq!(out, b"*0\r\n");
}

#[test]
fn specialised_encoders_round_trip() {
    let value = vec![b'v'; 1000];
    let cases: Vec<(Vec<u8>, Vec<Vec<u8>>)> = vec![
        (enc(|o| resp::get(o, b"user1")), strs(&["GET", "user1"])),
        (
            enc(|o| resp::set(o, b"k", b"hello", None)),
            strs(&["SET", "k", "hello"]),
        ),
        (
            enc(|o| resp::set(o, b"k", &value, Some(3600))),
            vec![
                b"SETEX".to_vec(),
                b"k".to_vec(),
                b"3600".to_vec(),
                value.clone(),
            ],
        ),
        (enc(|o| resp::del(o, b"k")), strs(&["DEL", "k"])),
        (
            enc(|o| resp::mget(o, &["a", "b", "c"])),
            strs(&["MGET", "a", "b", "c"]),
        ),
        (
            enc(|o| {
                let fields: Vec<(&[u8], &[u8])> = vec![(b"f0", b"v0"), (b"f1", b"")];
                resp::hset(o, b"h", fields.iter().copied())
            }),
            strs(&["HSET", "h", "f0", "v0", "f1", ""]),
        ),
        (enc(|o| resp::hgetall(o, b"h")), strs(&["HGETALL", "h"])),
        (
            enc(|o| resp::hmget(o, b"h", &["f0", "f9"])),
            strs(&["HMGET", "h", "f0", "f9"]),
        ),
        (
            enc(|o| resp::zadd(o, b"z", 1234.5, b"m")),
            strs(&["ZADD", "z", "1234.5", "m"]),
        ),
        (
            enc(|o| resp::zadd(o, b"z", f64::NEG_INFINITY, b"m")),
            strs(&["ZADD", "z", "-inf", "m"]),
        ),
        (
            enc(|o| resp::zrangebyscore_limit(o, b"z", 17.0, 50)),
            strs(&["ZRANGEBYSCORE", "z", "17.0", "+inf", "LIMIT", "0", "50"]),
        ),
        (
            enc(|o| resp::auth(o, None, b"secret")),
            strs(&["AUTH", "secret"]),
        ),
        (
            enc(|o| resp::auth(o, Some(b"alice"), b"secret")),
            strs(&["AUTH", "alice", "secret"]),
        ),
        (enc(|o| resp::select(o, 15)), strs(&["SELECT", "15"])),
        (enc(|o| resp::hello(o, 3, None)), strs(&["HELLO", "3"])),
        (
            enc(|o| resp::hello(o, 3, Some((b"default", b"pw")))),
            strs(&["HELLO", "3", "AUTH", "default", "pw"]),
        ),
        (enc(resp::ping), strs(&["PING"])),
        (enc(|o| resp::info(o, None)), strs(&["INFO"])),
        (
            enc(|o| resp::info(o, Some(b"memory"))),
            strs(&["INFO", "memory"]),
        ),
        (enc(resp::cluster_slots), strs(&["CLUSTER", "SLOTS"])),
        (enc(resp::asking), strs(&["ASKING"])),
    ];
    for (bytes, want) in cases {
        assert_eq!(args(&bytes), want, "{:?}", String::from_utf8_lossy(&bytes));
    }
    // Known bytes for the hot path.
    assert_eq!(
        enc(|o| resp::set(o, b"key", b"val", Some(10))),
        b"*4\r\n$5\r\nSETEX\r\n$3\r\nkey\r\n$2\r\n10\r\n$3\r\nval\r\n"
    );
    assert_eq!(
        enc(|o| resp::get(o, b"key")),
        b"*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n"
    );
}

fn enc(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut out = Vec::new();
    f(&mut out);
    out
}

#[test]
fn encoders_append_to_a_pipeline() {
    let mut out = b"leftover".to_vec();
    resp::get(&mut out, b"a");
    resp::set(&mut out, b"b", b"1", None);
    let mut pos = 8;
    let mut names = Vec::new();
    while pos < out.len() {
        let (f, n) = resp::parse(&out[pos..]).unwrap().unwrap();
        names.push(
            f.as_aggregate()
                .unwrap()
                .iter()
                .next()
                .unwrap()
                .as_bytes()
                .unwrap()
                .to_vec(),
        );
        pos += n;
    }
    assert_eq!(names, strs(&["GET", "SET"]));
}

#[test]
#[should_panic(expected = "fewer fields")]
fn hset_rejects_a_lying_iterator() {
    struct Liar(usize);
    impl Iterator for Liar {
        type Item = (&'static [u8], &'static [u8]);
        fn next(&mut self) -> Option<Self::Item> {
            (self.0 > 0).then(|| {
                self.0 -= 1;
                (&b"f"[..], &b"v"[..])
            })
        }
    }
    impl ExactSizeIterator for Liar {
        fn len(&self) -> usize {
            self.0 + 1
        }
    }
    resp::hset(&mut Vec::new(), b"h", Liar(2));
}

#[test]
fn frames_write_back_to_the_same_bytes() {
    for sample in samples() {
        let frame = one(&sample);
        let mut out = Vec::new();
        frame.write(&mut out);
        if sample.starts_with(b"|") || sample.starts_with(b",") {
            // Attributes are dropped; doubles are written in canonical form.
            let again = one(&out);
            match (frame, again) {
                (Frame::Double(a), Frame::Double(b)) => {
                    assert!(a == b || (a.is_nan() && b.is_nan()))
                }
                (a, b) => assert_eq!(a, b),
            }
        } else {
            assert_eq!(out, sample, "{frame:?}");
        }
    }
}

// ---- Fragmentation ----

/// One sample reply of every type, nested ones, and edge cases.
fn samples() -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = [
        &b"+OK\r\n"[..],
        b"+\r\n",
        b"-ERR unknown command 'foo'\r\n",
        b":0\r\n",
        b":-9223372036854775808\r\n",
        b"$5\r\nhello\r\n",
        b"$0\r\n\r\n",
        b"$-1\r\n",
        b"$6\r\na\r\nb\r\n\r\n",
        b"*-1\r\n",
        b"*0\r\n",
        b"*2\r\n$3\r\nfoo\r\n$-1\r\n",
        b"*2\r\n*3\r\n:1\r\n:2\r\n:3\r\n*2\r\n+Hello\r\n-World\r\n",
        b"*3\r\n*0\r\n*1\r\n*0\r\n%0\r\n",
        b"_\r\n",
        b"#t\r\n",
        b",3.25\r\n",
        b",-inf\r\n",
        b"(12345678901234567890123\r\n",
        b"!10\r\nERR failed\r\n",
        b"=8\r\nmkd:# hi\r\n",
        b"%2\r\n+a\r\n:1\r\n$1\r\nb\r\n*2\r\n#f\r\n_\r\n",
        b"~2\r\n:1\r\n:2\r\n",
        b">3\r\n$10\r\ninvalidate\r\n*1\r\n$3\r\nkey\r\n_\r\n",
        b"|1\r\n+a\r\n:1\r\n*1\r\n|1\r\n+b\r\n:2\r\n:3\r\n",
    ]
    .iter()
    .map(|s| s.to_vec())
    .collect();
    // A 20-deep nest and a 100-byte bulk.
    let mut deep = Vec::new();
    for _ in 0..20 {
        deep.extend_from_slice(b"*2\r\n:7\r\n");
    }
    deep.extend_from_slice(b"$3\r\nend\r\n");
    v.push(deep);
    let mut bulk = b"$100\r\n".to_vec();
    bulk.extend(std::iter::repeat_n(b'x', 100));
    bulk.extend_from_slice(b"\r\n");
    v.push(bulk);
    v
}

#[test]
fn every_proper_prefix_is_incomplete() {
    for sample in samples() {
        for cut in 0..sample.len() {
            assert_eq!(
                resp::parse(&sample[..cut]),
                Ok(None),
                "{cut}-byte prefix of {:?}",
                String::from_utf8_lossy(&sample)
            );
            assert_eq!(resp::skip(&sample[..cut]), Ok(None));
        }
        one(&sample);
    }
}

/// Feeds `stream` in chunks ending at `cuts`, parsing replies as a client's read loop does,
/// and returns the bytes of each reply.
fn read_loop(stream: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut buf: Vec<u8> = Vec::new();
    let mut got = Vec::new();
    let mut fed = 0;
    for &cut in cuts.iter().chain(std::iter::once(&stream.len())) {
        buf.extend_from_slice(&stream[fed..cut]);
        fed = cut;
        let mut pos = 0;
        while let Some((_, n)) = resp::parse(&buf[pos..]).unwrap() {
            assert_eq!(resp::skip(&buf[pos..]), Ok(Some(n)));
            got.push(buf[pos..pos + n].to_vec());
            pos += n;
        }
        buf.drain(..pos);
    }
    assert!(buf.is_empty(), "bytes left over");
    got
}

#[test]
fn pipeline_split_at_every_byte_reassembles() {
    let samples = samples();
    let stream: Vec<u8> = samples.concat();
    for cut in 0..=stream.len() {
        assert_eq!(read_loop(&stream, &[cut]), samples, "split at {cut}");
    }
    // Byte by byte, and in chunks of 2, 3, 7 and 64.
    for step in [1, 2, 3, 7, 64] {
        let cuts: Vec<usize> = (step..stream.len()).step_by(step).collect();
        assert_eq!(read_loop(&stream, &cuts), samples, "chunks of {step}");
    }
}

// ---- Malformed input ----

#[test]
fn malformed_inputs_give_the_expected_error() {
    let mut deep65 = b"*1\r\n".repeat(65);
    deep65.extend_from_slice(b":1\r\n");
    let mut empty_at_65 = b"*1\r\n".repeat(64);
    empty_at_65.extend_from_slice(b"*0\r\n");
    let long_line = [b"+".as_slice(), &[b'a'; 70_000]].concat();
    let cases: Vec<(&[u8], ErrorKind, usize)> = vec![
        (b"A\r\n", ErrorKind::UnexpectedByte, 0),
        (b"\r\n", ErrorKind::UnexpectedByte, 0),
        (b"$abc\r\n", ErrorKind::UnexpectedByte, 1),
        (b"$?\r\n", ErrorKind::UnexpectedByte, 1),
        (b"$\r\n", ErrorKind::BadInteger, 1),
        (b"$-\r\n", ErrorKind::BadInteger, 1),
        (b"$-2\r\n", ErrorKind::NegativeLength, 1),
        (b"$3\r\nabcd\r\n", ErrorKind::MissingCrlf, 7),
        (b"$3\r\nabc\rx", ErrorKind::MissingCrlf, 8),
        (b"$3\rx", ErrorKind::MissingCrlf, 3),
        (b"$536870913\r\n", ErrorKind::TooLarge, 1),
        (b"+OK\n", ErrorKind::MissingCrlf, 3),
        (b"+OK\rX", ErrorKind::MissingCrlf, 4),
        (b"-ERR\n", ErrorKind::MissingCrlf, 4),
        (&long_line, ErrorKind::LineTooLong, 0),
        (b":12345678901234567890\r\n", ErrorKind::BadInteger, 1),
        (b":9223372036854775808\r\n", ErrorKind::BadInteger, 1),
        (b":-9223372036854775809\r\n", ErrorKind::BadInteger, 1),
        (b":1.5\r\n", ErrorKind::UnexpectedByte, 2),
        (b": 1\r\n", ErrorKind::UnexpectedByte, 1),
        (b"*-2\r\n", ErrorKind::NegativeLength, 1),
        (b"%-1\r\n", ErrorKind::NegativeLength, 1),
        (b"~-1\r\n", ErrorKind::NegativeLength, 1),
        (b"*1073741825\r\n", ErrorKind::TooLarge, 1),
        (b"%1073741825\r\n", ErrorKind::TooLarge, 1),
        (b"*2\r\n:1\r\nX", ErrorKind::UnexpectedByte, 8),
        (b"*1\r\n$2\r\nabc\r\n", ErrorKind::MissingCrlf, 10),
        (&deep65, ErrorKind::TooDeep, 256),
        (&empty_at_65, ErrorKind::TooDeep, 256),
        (b"_x", ErrorKind::MissingCrlf, 1),
        (b"_\rx", ErrorKind::MissingCrlf, 2),
        (b"#x\r\n", ErrorKind::BadValue, 1),
        (b"#\r\n", ErrorKind::BadValue, 1),
        (b",abc\r\n", ErrorKind::BadValue, 1),
        (b",\r\n", ErrorKind::BadValue, 1),
        (b"(12a\r\n", ErrorKind::BadValue, 1),
        (b"(-\r\n", ErrorKind::BadValue, 1),
        (b"=3\r\ntxt\r\n", ErrorKind::BadValue, 4),
        (b"=4\r\ntxtx\r\n", ErrorKind::BadValue, 4),
        (b"!-1\r\n", ErrorKind::NegativeLength, 1),
        (b"=-1\r\n", ErrorKind::NegativeLength, 1),
    ];
    for (input, kind, offset) in cases {
        let e = err(input);
        assert_eq!(
            (e.kind(), e.offset()),
            (kind, Some(offset)),
            "{e} for {:?}",
            String::from_utf8_lossy(&input[..input.len().min(40)])
        );
    }
}

#[test]
fn error_messages_say_what_was_expected_and_found() {
    assert_eq!(
        err(b"A").to_string(),
        "RESP: expected a type byte (+ - : $ * _ # , ( ! = % ~ | >), found 0x41 ('A') at offset 0"
    );
    assert_eq!(
        err(b"$3\r\nabcd").to_string(),
        "RESP: expected CRLF after bulk string, found 0x64 ('d') at offset 7"
    );
    assert_eq!(
        err(b"$999999999999\r\n").to_string(),
        "RESP: bulk string 999999999999 at offset 1 is above the maximum 536870912"
    );
    assert_eq!(
        err(b"#maybe\r\n").to_string(),
        "RESP: expected t or f after #, found \"maybe\" at offset 1"
    );
    assert!(err(b":x\r\n")
        .to_string()
        .contains("expected a decimal digit or CR"));
    let mut deep = b"*1\r\n".repeat(70);
    deep.extend_from_slice(b":1\r\n");
    assert_eq!(
        err(&deep).to_string(),
        "RESP: aggregates nested more than 64 deep (at offset 256)"
    );
}

#[test]
fn errors_come_before_the_data_arrives() {
    // A length over the limit is an error from the header alone.
    assert_eq!(
        resp::parse(b"$600000000\r\n").map_err(|e| e.kind()),
        Err(ErrorKind::TooLarge)
    );
    // A huge but allowed aggregate count is merely incomplete.
    assert_eq!(resp::parse(b"*1000000\r\n:1\r\n"), Ok(None));
    assert_eq!(resp::parse(b"$1000000\r\nabc"), Ok(None));
}

#[test]
fn custom_limits_apply() {
    let lim = Limits {
        max_bulk_len: 10,
        max_aggregate_len: 3,
        max_depth: 2,
        max_line_len: 8,
    };
    let kind = |b: &[u8]| {
        resp::parse_with(b, &lim)
            .map(|r| r.map(|(_, n)| n))
            .map_err(|e| e.kind())
    };
    assert!(matches!(kind(b"$10\r\n0123456789\r\n"), Ok(Some(_))));
    assert_eq!(kind(b"$11\r\n"), Err(ErrorKind::TooLarge));
    assert!(matches!(kind(b"*3\r\n:1\r\n:2\r\n:3\r\n"), Ok(Some(_))));
    assert_eq!(kind(b"*4\r\n"), Err(ErrorKind::TooLarge));
    assert!(matches!(kind(b"*1\r\n*1\r\n:1\r\n"), Ok(Some(_))));
    assert_eq!(kind(b"*1\r\n*1\r\n*1\r\n:1\r\n"), Err(ErrorKind::TooDeep));
    assert_eq!(
        resp::skip_with(b"*1\r\n*1\r\n*1\r\n:1\r\n", &lim).map_err(|e| e.kind()),
        Err(ErrorKind::TooDeep)
    );
    assert!(matches!(kind(b"+12345678\r\n"), Ok(Some(_))));
    assert_eq!(kind(b"+123456789"), Err(ErrorKind::LineTooLong));
    assert_eq!(kind(b"+12345678"), Ok(None));
    assert_eq!(Limits::default(), Limits::DEFAULT);
}

#[test]
fn deep_nesting_is_bounded_not_recursive() {
    // 64 levels parse and iterate.
    let mut ok = b"*1\r\n".repeat(64);
    ok.extend_from_slice(b":42\r\n");
    let mut frame = one(&ok);
    let mut depth = 1;
    while let Some(a) = frame.as_aggregate() {
        frame = a.iter().next().unwrap();
        depth += 1;
    }
    assert_eq!((frame, depth), (Frame::Integer(42), 65));
    // A hostile million-deep input is an error, not a stack overflow.
    let hostile = b"*1\r\n".repeat(1_000_000);
    assert_eq!(err(&hostile).kind(), ErrorKind::TooDeep);
    let hostile = b"|1\r\n".repeat(1_000_000);
    assert_eq!(err(&hostile).kind(), ErrorKind::TooDeep);
}

#[test]
fn wide_aggregates_iterate_exactly() {
    let mut buf = b"*10000\r\n".to_vec();
    for i in 0..10_000u32 {
        Frame::Integer(i as i64).write(&mut buf);
    }
    let a = one(&buf).as_aggregate().unwrap();
    assert_eq!(a.iter().len(), 10_000);
    assert!(a
        .iter()
        .enumerate()
        .all(|(i, f)| f == Frame::Integer(i as i64)));
    assert_eq!(
        format!("{:?}", one(b"*2\r\n:1\r\n$1\r\nx\r\n")),
        "Array(Some([Integer(1), Bulk(Some([120]))]))"
    );
}

// ---- Cluster ----

#[test]
fn key_slots_match_redis() {
    assert_eq!(resp::crc16(b"123456789"), 0x31C3);
    // 0x31C3 = 12739 is below 16384: the slot is the checksum itself.
    assert_eq!(resp::key_slot(b"123456789"), 12739);
    assert_eq!(resp::key_slot(b"foo"), 12182);
    assert_eq!(resp::key_slot(b"bar"), 5061);
    assert_eq!(resp::key_slot(b""), 0);
    assert_eq!(
        resp::key_slot(b"{user1000}.following"),
        resp::key_slot(b"{user1000}.followers")
    );
    assert_eq!(
        resp::key_slot(b"{user1000}.following"),
        resp::key_slot(b"user1000")
    );
    assert_eq!(resp::hash_tag(b"foo{}{bar}"), b"foo{}{bar}");
    assert_eq!(
        resp::key_slot(b"foo{}{bar}"),
        resp::crc16(b"foo{}{bar}") % 16384
    );
    assert_eq!(resp::hash_tag(b"foo{{bar}}zap"), b"{bar");
    assert_eq!(resp::key_slot(b"foo{{bar}}zap"), resp::key_slot(b"{bar"));
    assert_eq!(resp::hash_tag(b"foo{bar}{zap}"), b"bar");
    assert_eq!(resp::hash_tag(b"foo{bar"), b"foo{bar");
    assert_eq!(resp::hash_tag(b"}{x}"), b"x");
    for i in 0..10_000u32 {
        assert!(resp::key_slot(format!("key:{i}").as_bytes()) < resp::SLOT_COUNT);
    }
}

#[test]
fn redirects_are_read_from_error_replies() {
    let frame = one(b"-MOVED 3999 127.0.0.1:6381\r\n");
    let r = frame.redirect().unwrap();
    assert_eq!(
        (r.kind, r.slot, r.addr, r.host(), r.port()),
        (
            RedirectKind::Moved,
            3999,
            "127.0.0.1:6381",
            "127.0.0.1",
            Some(6381)
        )
    );
    let r = resp::parse_redirect(b"ASK 16383 [::1]:7000").unwrap();
    assert_eq!(
        (r.kind, r.slot, r.host(), r.port()),
        (RedirectKind::Ask, 16383, "::1", Some(7000))
    );
    let r = resp::parse_redirect(b"MOVED 0 :6380").unwrap();
    assert_eq!((r.host(), r.port()), ("", Some(6380)));
    let r = resp::parse_redirect(b"MOVED 1 redis-0.example:6379").unwrap();
    assert_eq!(r.host(), "redis-0.example");
    for bad in [
        &b"ERR unknown"[..],
        b"MOVED",
        b"MOVED 3999",
        b"MOVED 3999 ",
        b"MOVED 16384 h:1",
        b"MOVED -1 h:1",
        b"MOVED x h:1",
        b"ASK 1 h:1 extra",
        b"moved 1 h:1",
        b"MOVED 1 \xff:1",
    ] {
        assert_eq!(
            resp::parse_redirect(bad),
            None,
            "{:?}",
            String::from_utf8_lossy(bad)
        );
    }
    assert_eq!(one(b"+MOVED 1 h:1\r\n").redirect(), None);
    assert!(one(b"!14\r\nASK 5 h.x:1234\r\n").redirect().is_some());
}

#[test]
fn cluster_slots_reply_is_read() {
    // The example from the CLUSTER SLOTS documentation (RESP2, with node ids).
    let buf = b"*3\r\n\
*4\r\n:0\r\n:5460\r\n*3\r\n$9\r\n127.0.0.1\r\n:30001\r\n$40\r\n09dbe9720cda62f7865eabc5fd8857c5d2678366\r\n\
*3\r\n$9\r\n127.0.0.1\r\n:30004\r\n$40\r\n821d8ca00d7ccf931ed3ffc7e3db0599d2271abf\r\n\
*4\r\n:5461\r\n:10922\r\n*3\r\n$9\r\n127.0.0.1\r\n:30002\r\n$40\r\nc9d93d9f2c0c524ff34cc11838c2003d8c29e013\r\n\
*3\r\n$9\r\n127.0.0.1\r\n:30005\r\n$40\r\nfaadb3eb99009de4ab72ad6b6ed87634c7ee410f\r\n\
*3\r\n:10923\r\n:16383\r\n*4\r\n$9\r\n127.0.0.1\r\n:30003\r\n$40\r\n044ec91f325b7595e76dbcb18cc688b6a5b434a1\r\n\
%1\r\n$8\r\nhostname\r\n$6\r\nhost-1\r\n";
    let ranges = resp::parse_cluster_slots(&one(buf)).unwrap();
    let node = |p: u16| ("127.0.0.1".to_string(), p);
    assert_eq!(
        ranges,
        [
            SlotRange {
                start: 0,
                end: 5460,
                master: node(30001),
                replicas: vec![node(30004)]
            },
            SlotRange {
                start: 5461,
                end: 10922,
                master: node(30002),
                replicas: vec![node(30005)]
            },
            SlotRange {
                start: 10923,
                end: 16383,
                master: node(30003),
                replicas: vec![]
            },
        ]
    );
    // An unknown endpoint as a nil host; an empty reply.
    let ranges =
        resp::parse_cluster_slots(&one(b"*1\r\n*3\r\n:0\r\n:16383\r\n*2\r\n$-1\r\n:7000\r\n"))
            .unwrap();
    assert_eq!(ranges[0].master, (String::new(), 7000));
    assert_eq!(resp::parse_cluster_slots(&one(b"*0\r\n")).unwrap(), []);

    for (bad, expected) in [
        (
            &b"-ERR This instance has cluster support disabled\r\n"[..],
            "an array of slot ranges",
        ),
        (b"*1\r\n:1\r\n", "a slot range"),
        (b"*1\r\n*2\r\n:0\r\n:1\r\n", "a slot range"),
        (
            b"*1\r\n*3\r\n:0\r\n:16384\r\n*2\r\n+h\r\n:1\r\n",
            "a slot number",
        ),
        (
            b"*1\r\n*3\r\n:5\r\n:4\r\n*2\r\n+h\r\n:1\r\n",
            "end is not before",
        ),
        (b"*1\r\n*3\r\n:0\r\n:1\r\n*1\r\n+h\r\n", "a node"),
        (b"*1\r\n*3\r\n:0\r\n:1\r\n*2\r\n+h\r\n:70000\r\n", "a port"),
        (b"*1\r\n*3\r\n:0\r\n:1\r\n*2\r\n:1\r\n:1\r\n", "a host name"),
    ] {
        let e = resp::parse_cluster_slots(&one(bad)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::UnexpectedFrame);
        assert!(
            e.to_string().starts_with("CLUSTER SLOTS: expected ")
                && e.to_string().contains(expected),
            "{e}"
        );
    }
}
