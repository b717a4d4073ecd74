//! The bodies of the fuzz targets (`fuzz/fuzz_targets/*.rs`), also run on stable by the
//! crate's fuzz smoke test. Not part of the supported API.
//!
//! Each body parses arbitrary bytes and panics only when an invariant breaks: a consumed
//! length out of range, [`resp::skip`] disagreeing with [`resp::parse`], a complete frame
//! whose proper prefix is not reported incomplete, or a re-encoded frame that parses
//! differently.

use crate::{memcache, resp};

/// Walks every element of a frame (which must not fail: the parser validated them).
/// `depth` is the number of aggregates that enclose `frame`: as in [`resp::MAX_DEPTH`],
/// only aggregates count as levels, so a scalar inside 64 nested arrays is legal while a
/// 65th array is not.
fn walk(frame: &resp::Frame<'_>, depth: usize, count: &mut usize) {
    *count += 1;
    if let Some(agg) = frame.as_aggregate() {
        let level = depth + 1;
        assert!(level <= resp::MAX_DEPTH, "aggregate deeper than MAX_DEPTH");
        let mut n = 0;
        for element in agg.iter() {
            walk(&element, level, count);
            n += 1;
        }
        assert_eq!(n, agg.frame_count(), "aggregate yielded a wrong count");
    }
    let _ = frame.redirect();
}

/// Checks that every proper prefix of a complete reply of `len` bytes is incomplete
/// (for short replies; sampled for long ones).
fn check_prefixes(data: &[u8], len: usize, incomplete: impl Fn(&[u8]) -> bool) {
    let step = (len / 64).max(1);
    let mut cut = 0;
    while cut < len {
        assert!(
            incomplete(&data[..cut]),
            "a {cut}-byte prefix of a complete {len}-byte reply was not incomplete"
        );
        cut += step;
    }
}

/// The `resp_parse` fuzz target. Returns whether `data` starts with a whole valid frame.
pub fn resp_parse(data: &[u8]) -> bool {
    let parsed = resp::parse(data);
    let skipped = resp::skip(data);
    match (&parsed, &skipped) {
        (Ok(Some((_, n))), Ok(Some(m))) => assert_eq!(n, m, "parse and skip disagree"),
        (Ok(None), Ok(None)) | (Err(_), Err(_)) => {}
        _ => panic!("parse {parsed:?} and skip {skipped:?} disagree"),
    }
    if let Ok(Some((frame, n))) = parsed {
        assert!(n > 0 && n <= data.len());
        let mut count = 0;
        walk(&frame, 0, &mut count);
        check_prefixes(data, n, |b| matches!(resp::parse(b), Ok(None)));
        let mut out = Vec::new();
        frame.write(&mut out);
        let (again, m) = resp::parse(&out)
            .expect("re-encoded frame parses")
            .expect("re-encoded frame is complete");
        assert_eq!(m, out.len());
        let same = match (frame, again) {
            (resp::Frame::Double(a), resp::Frame::Double(b)) => {
                a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
            }
            (a, b) => a == b,
        };
        assert!(same, "re-encoded {frame:?} parsed as {again:?}");
    }
    matches!(parsed, Ok(Some(_)))
}

/// The `memcache_parse` fuzz target: text replies, meta replies and requests. Returns how
/// many of the three parsers found a whole valid unit at the start of `data`.
pub fn memcache_parse(data: &[u8]) -> usize {
    let mut whole = 0;
    let mut out = Vec::new();
    if let Ok(Some((reply, n))) = memcache::parse(data) {
        assert!(n > 0 && n <= data.len());
        check_prefixes(data, n, |b| matches!(memcache::parse(b), Ok(None)));
        out.clear();
        reply.write(&mut out);
        assert_eq!(memcache::parse(&out), Ok(Some((reply, out.len()))));
        whole += 1;
    }
    if let Ok(Some((reply, n))) = memcache::parse_meta(data) {
        assert!(n > 0 && n <= data.len());
        check_prefixes(data, n, |b| matches!(memcache::parse_meta(b), Ok(None)));
        if let Some(flags) = reply.flags() {
            let _ = (flags.opaque(), flags.key(), flags.cas(), flags.ttl());
            for (_flag, _value) in flags {}
        }
        out.clear();
        reply.write(&mut out);
        assert_eq!(memcache::parse_meta(&out), Ok(Some((reply, out.len()))));
        whole += 1;
    }
    if let Ok(Some((req, n))) = memcache::parse_request(data) {
        assert!(n > 0 && n <= data.len());
        check_prefixes(data, n, |b| matches!(memcache::parse_request(b), Ok(None)));
        if let memcache::Request::Get { keys, .. } = req {
            assert!(keys.iter().count() > 0);
        }
        whole += 1;
    }
    whole
}

/// The `memcache_binary_parse` fuzz target: binary protocol responses. Returns whether
/// `data` starts with a whole valid response; when it does, the response's parts lie
/// within the input, every proper prefix is incomplete, and the response written back
/// parses the same.
pub fn memcache_binary_parse(data: &[u8]) -> bool {
    let Ok(Some((r, n))) = memcache::binary::parse(data) else {
        return false;
    };
    assert!(n >= memcache::binary::HEADER_LEN && n <= data.len());
    assert_eq!(
        r.extras.len() + r.key.len() + r.value.len(),
        n - memcache::binary::HEADER_LEN,
        "the parts do not add up to the body"
    );
    let _ = (r.item_flags(), r.status.text(), r.opcode.name());
    check_prefixes(data, n, |b| matches!(memcache::binary::parse(b), Ok(None)));
    let mut out = Vec::new();
    r.write(&mut out);
    assert_eq!(memcache::binary::parse(&out), Ok(Some((r, out.len()))));
    true
}
