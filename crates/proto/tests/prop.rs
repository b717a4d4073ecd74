//! Property tests: arbitrary bytes never panic; generated replies round-trip through an
//! encoder written here (independent of the crate's) and the parsers, whole and split.

use kvlab_proto::fuzzing;
use kvlab_proto::memcache::{self, Reply};
use kvlab_proto::resp::{self, Frame};
use proptest::prelude::*;

// ---- An owned RESP value and its encoding ----

#[derive(Debug, Clone, PartialEq)]
enum V {
    Simple(Vec<u8>),
    Error(Vec<u8>),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Option<Vec<V>>),
    Null,
    Bool(bool),
    Double(f64),
    Big(String),
    BulkError(Vec<u8>),
    Verbatim(Vec<u8>, Vec<u8>),
    Map(Vec<(V, V)>),
    Set(Vec<V>),
    Push(Vec<V>),
    /// An attribute map, then the value it annotates.
    Attr(Vec<(V, V)>, Box<V>),
}

fn encode(v: &V, out: &mut Vec<u8>) {
    let agg = |out: &mut Vec<u8>, t: char, items: &[V]| {
        out.extend_from_slice(format!("{t}{}\r\n", items.len()).as_bytes());
        for i in items {
            encode(i, out);
        }
    };
    let pairs = |out: &mut Vec<u8>, t: char, items: &[(V, V)]| {
        out.extend_from_slice(format!("{t}{}\r\n", items.len()).as_bytes());
        for (k, v) in items {
            encode(k, out);
            encode(v, out);
        }
    };
    let bulk = |out: &mut Vec<u8>, t: char, data: &[u8]| {
        out.extend_from_slice(format!("{t}{}\r\n", data.len()).as_bytes());
        out.extend_from_slice(data);
        out.extend_from_slice(b"\r\n");
    };
    match v {
        V::Simple(s) => {
            out.push(b'+');
            out.extend_from_slice(s);
            out.extend_from_slice(b"\r\n");
        }
        V::Error(s) => {
            out.push(b'-');
            out.extend_from_slice(s);
            out.extend_from_slice(b"\r\n");
        }
        V::Int(n) => out.extend_from_slice(format!(":{n}\r\n").as_bytes()),
        V::Bulk(None) => out.extend_from_slice(b"$-1\r\n"),
        V::Bulk(Some(d)) => bulk(out, '$', d),
        V::Array(None) => out.extend_from_slice(b"*-1\r\n"),
        V::Array(Some(items)) => agg(out, '*', items),
        V::Null => out.extend_from_slice(b"_\r\n"),
        V::Bool(b) => out.extend_from_slice(if *b { b"#t\r\n" } else { b"#f\r\n" }),
        V::Double(x) => out.extend_from_slice(format!(",{x}\r\n").as_bytes()),
        V::Big(s) => out.extend_from_slice(format!("({s}\r\n").as_bytes()),
        V::BulkError(d) => bulk(out, '!', d),
        V::Verbatim(f, t) => bulk(out, '=', &[&f[..], b":", t].concat()),
        V::Map(items) => pairs(out, '%', items),
        V::Set(items) => agg(out, '~', items),
        V::Push(items) => agg(out, '>', items),
        V::Attr(attrs, inner) => {
            pairs(out, '|', attrs);
            encode(inner, out);
        }
    }
}

/// What the parser shows of a value: attributes dropped.
fn visible(v: &V) -> V {
    let all = |items: &[V]| items.iter().map(visible).collect::<Vec<_>>();
    match v {
        V::Attr(_, inner) => visible(inner),
        V::Array(Some(items)) => V::Array(Some(all(items))),
        V::Set(items) => V::Set(all(items)),
        V::Push(items) => V::Push(all(items)),
        V::Map(items) => V::Map(
            items
                .iter()
                .map(|(k, v)| (visible(k), visible(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn from_frame(f: Frame<'_>) -> V {
    let all = |a: resp::Aggregate<'_>| a.iter().map(from_frame).collect::<Vec<_>>();
    match f {
        Frame::SimpleString(s) => V::Simple(s.to_vec()),
        Frame::Error(s) => V::Error(s.to_vec()),
        Frame::Integer(n) => V::Int(n),
        Frame::Bulk(b) => V::Bulk(b.map(<[u8]>::to_vec)),
        Frame::Array(a) => V::Array(a.map(all)),
        Frame::Null => V::Null,
        Frame::Boolean(b) => V::Bool(b),
        Frame::Double(x) => V::Double(x),
        Frame::BigNumber(s) => V::Big(String::from_utf8(s.to_vec()).unwrap()),
        Frame::BulkError(s) => V::BulkError(s.to_vec()),
        Frame::VerbatimString { format, text } => V::Verbatim(format.to_vec(), text.to_vec()),
        Frame::Map(a) => {
            assert_eq!(a.frame_count(), 2 * a.len());
            V::Map(
                a.pairs()
                    .map(|(k, v)| (from_frame(k), from_frame(v)))
                    .collect(),
            )
        }
        Frame::Set(a) => V::Set(all(a)),
        Frame::Push(a) => V::Push(all(a)),
    }
}

fn line_bytes() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(
        any::<u8>().prop_filter("no CR/LF", |b| *b != b'\r' && *b != b'\n'),
        0..20,
    )
}

fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(any::<u8>(), 0..max)
}

fn value() -> impl Strategy<Value = V> {
    let leaf = prop_oneof![
        line_bytes().prop_map(V::Simple),
        line_bytes().prop_map(V::Error),
        any::<i64>().prop_map(V::Int),
        proptest::option::of(bytes(40)).prop_map(V::Bulk),
        Just(V::Array(None)),
        Just(V::Null),
        any::<bool>().prop_map(V::Bool),
        any::<f64>()
            .prop_filter("NaN is not equal to itself", |x| !x.is_nan())
            .prop_map(V::Double),
        "-?[0-9]{1,60}".prop_map(V::Big),
        bytes(30).prop_map(V::BulkError),
        ("[a-z]{3}", bytes(30)).prop_map(|(f, t)| V::Verbatim(f.into_bytes(), t)),
    ];
    leaf.prop_recursive(5, 96, 6, |inner| {
        let list = proptest::collection::vec(inner.clone(), 0..6);
        let pairs = proptest::collection::vec((inner.clone(), inner.clone()), 0..4);
        prop_oneof![
            list.clone().prop_map(|v| V::Array(Some(v))),
            list.clone().prop_map(V::Set),
            list.prop_map(V::Push),
            pairs.clone().prop_map(V::Map),
            (pairs, inner).prop_map(|(a, v)| V::Attr(a, Box::new(v))),
        ]
    })
}

// ---- memcached replies ----

fn reply_bytes() -> impl Strategy<Value = Vec<u8>> {
    let token = "[!-~]{1,30}";
    let msg = "[ -~]{0,40}";
    prop_oneof![
        (
            token,
            any::<u32>(),
            bytes(60),
            proptest::option::of(any::<u64>())
        )
            .prop_map(|(k, f, d, c)| {
                let mut out = format!("VALUE {k} {f} {}", d.len()).into_bytes();
                if let Some(c) = c {
                    out.extend_from_slice(format!(" {c}").as_bytes());
                }
                out.extend_from_slice(b"\r\n");
                out.extend_from_slice(&d);
                out.extend_from_slice(b"\r\n");
                out
            }),
        prop_oneof![
            Just("END"),
            Just("STORED"),
            Just("NOT_STORED"),
            Just("EXISTS"),
            Just("NOT_FOUND"),
            Just("DELETED"),
            Just("TOUCHED"),
            Just("OK"),
            Just("RESET"),
            Just("ERROR"),
        ]
        .prop_map(|s| format!("{s}\r\n").into_bytes()),
        any::<u64>().prop_map(|n| format!("{n}\r\n").into_bytes()),
        msg.prop_map(|m| format!("CLIENT_ERROR {m}\r\n").into_bytes()),
        msg.prop_map(|m| format!("SERVER_ERROR {m}\r\n").into_bytes()),
        token.prop_map(|v| format!("VERSION {v}\r\n").into_bytes()),
        (token, msg).prop_map(|(n, v)| format!("STAT {n} {v}\r\n").into_bytes()),
    ]
}

/// What a text reply's bytes say, read independently of the parser.
fn expected_reply(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn reply_to_bytes(r: &Reply<'_>) -> String {
    let mut out = Vec::new();
    r.write(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(data in bytes(200)) {
        fuzzing::resp_parse(&data);
        fuzzing::memcache_parse(&data);
    }

    #[test]
    fn arbitrary_bytes_after_a_valid_start_never_panic(
        prefix in prop_oneof![
            Just(&b"*3\r\n"[..]), Just(&b"$10\r\n"[..]), Just(&b"%2\r\n"[..]),
            Just(&b"|1\r\n"[..]), Just(&b"VALUE k 0 "[..]), Just(&b"VA "[..]),
            Just(&b"ms k "[..]), Just(&b"set k 0 0 "[..]),
        ],
        data in bytes(100),
    ) {
        let buf = [prefix, &data[..]].concat();
        fuzzing::resp_parse(&buf);
        fuzzing::memcache_parse(&buf);
    }

    #[test]
    fn generated_frames_round_trip(values in proptest::collection::vec(value(), 1..5), cut in any::<proptest::sample::Index>()) {
        let mut stream = Vec::new();
        let mut ends = Vec::new();
        for v in &values {
            encode(v, &mut stream);
            ends.push(stream.len());
        }
        // Each frame parses whole, to the value, consuming exactly its bytes.
        let mut pos = 0;
        for (v, &end) in values.iter().zip(&ends) {
            let (frame, n) = resp::parse(&stream[pos..]).unwrap().unwrap();
            prop_assert_eq!(pos + n, end);
            prop_assert_eq!(resp::skip(&stream[pos..]).unwrap(), Some(n));
            prop_assert_eq!(from_frame(frame), visible(v));
            // Writing the frame back and parsing again gives the same value.
            let mut again = Vec::new();
            frame.write(&mut again);
            prop_assert_eq!(from_frame(resp::parse(&again).unwrap().unwrap().0), visible(v));
            pos += n;
        }
        // Split anywhere: the prefix yields whole frames only, then incomplete.
        let cut = cut.index(stream.len() + 1);
        let mut pos = 0;
        let mut count = 0;
        while let Some((_, n)) = resp::parse(&stream[pos..cut]).unwrap() {
            pos += n;
            count += 1;
        }
        prop_assert_eq!(count, ends.iter().filter(|&&e| e <= cut).count());
    }

    #[test]
    fn generated_memcached_replies_round_trip(replies in proptest::collection::vec(reply_bytes(), 1..6), cut in any::<proptest::sample::Index>()) {
        let stream = replies.concat();
        let mut pos = 0;
        for r in &replies {
            let (reply, n) = memcache::parse(&stream[pos..]).unwrap().unwrap();
            prop_assert_eq!(n, r.len());
            prop_assert_eq!(reply_to_bytes(&reply), expected_reply(r));
            pos += n;
        }
        let cut = cut.index(stream.len() + 1);
        let mut pos = 0;
        let mut count = 0;
        while let Some((_, n)) = memcache::parse(&stream[pos..cut]).unwrap() {
            pos += n;
            count += 1;
        }
        let mut end = 0;
        let whole = replies.iter().take_while(|r| { end += r.len(); end <= cut }).count();
        prop_assert_eq!(count, whole);
    }

    #[test]
    fn key_slot_uses_only_the_hash_tag(tag in "[a-z0-9]{1,10}", a in "[a-z]{0,5}", b in "[a-z{]{0,5}") {
        let key = format!("{a}{{{tag}}}{b}");
        prop_assert_eq!(resp::key_slot(key.as_bytes()), resp::key_slot(tag.as_bytes()));
    }
}
