//! Encoding a request's commands and turning their replies into outcomes.

use super::*;

/// `HGETALL key`, or `HMGET key names…` for a read of named fields.
pub(super) fn read_command(out: &mut Vec<u8>, req: &Request, key: &[u8]) -> Part {
    match named_fields(req) {
        None => {
            resp::hgetall(out, key);
            Part::HGetAll
        }
        Some(names) => {
            let mut cmd = resp::Command::new(out, 2 + names.len());
            cmd.arg(b"HMGET").arg(key);
            for (name, _) in names.iter() {
                cmd.arg(name);
            }
            Part::HMGet
        }
    }
}

/// `HSET key fields…`: a fields value field by field; a blob as one field with an empty
/// name (the hash model keeps a blob so, and a blob read returns that field).
pub(super) fn hset(out: &mut Vec<u8>, req: &Request) {
    match req.value.get() {
        ValueRef::Fields(fields) => resp::hset(out, &req.key, fields.iter()),
        ValueRef::Blob(blob) => resp::hset(out, &req.key, [(&b""[..], blob)]),
    }
}

/// The fields a hash read names; `None` reads them all (`HGETALL`): a read of every
/// field, a blob read, or a named read that names none.
pub(super) fn named_fields(req: &Request) -> Option<&Record> {
    req.read.names().filter(|names| !names.is_empty())
}

/// The one command that serves `req` on its own, when there is one: a read, a string
/// write that needs no read first, a hash update, a string delete. The rest (inserts
/// and deletes that also touch the scan index, partial string updates, scans) take
/// several commands; so does a multi-key read in a cluster, one `MGET` per hash slot
/// ([`Group`]), which is why only batches for one server use this.
pub(super) fn single_command(model: Model, req: &Request) -> Option<Part> {
    if req.command.is_some() {
        return Some(Part::Command);
    }
    match (req.kind, model) {
        (OpKind::Read, Model::String) if req.is_multi_read() => Some(Part::MGet),
        (OpKind::Read, Model::Hash) if req.is_multi_read() => None,
        (OpKind::Read, Model::String) => Some(Part::Get),
        (OpKind::Read, Model::Hash) if named_fields(req).is_none() => Some(Part::HGetAll),
        (OpKind::Read, Model::Hash) => Some(Part::HMGet),
        (OpKind::Insert, Model::String) | (OpKind::Update, Model::Hash) => Some(Part::Write),
        (OpKind::Update, Model::String) if req.value.is_blob() || req.value.is_whole() => {
            Some(Part::Write)
        }
        (OpKind::Delete, Model::String) => Some(Part::Del),
        _ => None,
    }
}

/// Encodes the command `part` ([`single_command`]) of `req`; with a data offset
/// ([`RedisConfig::data_offset`]) a string read or blob write addresses its value at that
/// offset, as memtier's `write_command_get` and `write_command_set` do.
pub(super) fn encode_single(
    out: &mut Vec<u8>,
    part: Part,
    model: Model,
    data_offset: u32,
    layout: &ValueLayout,
    req: &Request,
) {
    match part {
        Part::Get if data_offset > 0 => {
            resp::Command::new(out, 4)
                .arg(b"GETRANGE")
                .arg(&req.key)
                .arg_u64(u64::from(data_offset))
                .arg(b"-1");
        }
        Part::Get => resp::get(out, &req.key),
        Part::Write if data_offset > 0 && model == Model::String && req.value.is_blob() => {
            resp::Command::new(out, 4)
                .arg(b"SETRANGE")
                .arg(&req.key)
                .arg_u64(u64::from(data_offset))
                .arg(req.value.blob());
        }
        Part::MGet => {
            let mut cmd = resp::Command::new(out, 1 + req.key_count());
            cmd.arg(b"MGET");
            for key in req.keys() {
                cmd.arg(key);
            }
        }
        Part::HGetAll | Part::HMGet => {
            read_command(out, req, &req.key);
        }
        Part::Write if model == Model::Hash => hset(out, req),
        Part::Write => {
            // `SET key value`, or memtier's `SETEX key ttl value`
            let ttl = (req.ttl_s > 0).then_some(req.ttl_s);
            match req.value.get() {
                ValueRef::Blob(blob) => resp::set(out, &req.key, blob, ttl),
                ValueRef::Fields(fields) => match layout.bare(fields) {
                    Some(value) => resp::set(out, &req.key, value, ttl),
                    None => resp::set_with(out, &req.key, fields.encoded_len(), ttl, |out| {
                        fields.encode_into(out)
                    }),
                },
            }
        }
        Part::Del => resp::del(out, &req.key),
        Part::Command => {
            let mut cmd = resp::Command::new(out, req.command.args.len());
            for arg in req.command.args.iter() {
                cmd.arg(arg);
            }
        }
        other => unreachable!("{other:?} is not a single command"),
    }
}

/// The payload bytes of a reply to an arbitrary command: the strings' bytes, or the
/// encoded elements of an aggregate; numbers, booleans and nil count nothing.
pub(super) fn reply_bytes(frame: &Frame<'_>) -> u64 {
    let n = match frame {
        Frame::SimpleString(b) | Frame::Error(b) | Frame::BigNumber(b) | Frame::BulkError(b) => {
            b.len()
        }
        Frame::Bulk(Some(b)) => b.len(),
        Frame::VerbatimString { text, .. } => text.len(),
        Frame::Array(Some(a)) | Frame::Map(a) | Frame::Set(a) | Frame::Push(a) => a.bytes().len(),
        Frame::Bulk(None)
        | Frame::Array(None)
        | Frame::Null
        | Frame::Integer(_)
        | Frame::Boolean(_)
        | Frame::Double(_) => 0,
    };
    n as u64
}

/// The outcome of a request sent as one command ([`single_command`]) from its reply,
/// which is not an error reply.
pub(super) fn single_outcome(
    part: Part,
    frame: &Frame<'_>,
    layout: &ValueLayout,
    slot: &mut Slot,
) -> Result<Outcome, StoreError> {
    let req = &slot.request;
    match part {
        Part::Command => Ok(Outcome::Replied {
            bytes: reply_bytes(frame),
            nil: matches!(frame, Frame::Bulk(None) | Frame::Array(None) | Frame::Null),
        }),
        Part::Write => Ok(Outcome::Written {
            bytes: req.written_bytes(),
        }),
        Part::Del => Ok(Outcome::Deleted),
        Part::Get => match frame {
            // A blob is returned verbatim (its size is the value's), a record decoded.
            Frame::Bulk(Some(v)) => layout
                .decode(req, v, &mut slot.reply)
                .map(|bytes| Outcome::Hit { bytes }),
            Frame::Bulk(None) | Frame::Null => Ok(Outcome::Miss),
            other => Err(unexpected("GET", other)),
        },
        Part::MGet => match frame.as_aggregate() {
            Some(values) => {
                slot.reply.clear();
                let (mut hits, mut bytes) = (0u32, 0u64);
                for (key, value) in req.keys().zip(values.iter()) {
                    if let Some(v) = value.as_bytes() {
                        slot.reply.push(key, v);
                        hits += 1;
                        bytes += v.len() as u64;
                    }
                }
                Ok(Outcome::MultiRead {
                    hits,
                    misses: (req.key_count() as u32).saturating_sub(hits),
                    bytes,
                })
            }
            None => Err(unexpected("MGET", frame)),
        },
        Part::HGetAll | Part::HMGet => {
            match hash_reply(frame, req, &mut slot.reply, part == Part::HGetAll) {
                Err(e) => Err(e),
                Ok(()) if slot.reply.is_empty() => Ok(Outcome::Miss),
                Ok(()) => Ok(Outcome::Hit {
                    bytes: slot.reply.value_bytes() as u64,
                }),
            }
        }
        other => unreachable!("{other:?} is not a single command"),
    }
}

/// The outcome of a request whose replies are all in, unless it needs another round
/// (a scan whose keys must now be read).
pub(super) fn finish(w: &mut SlotWork, req: &Request) -> Option<Result<Outcome, StoreError>> {
    if let Some(r) = w.outcome.take() {
        if r.is_err() || req.kind != OpKind::Scan {
            return Some(r);
        }
    }
    if !w.groups.is_empty() {
        // A cluster multi-key read: done when no group waits to be sent again.
        if w.group_resends > 0 {
            return None;
        }
        return Some(Ok(Outcome::MultiRead {
            hits: w.multi_hits,
            misses: (req.key_count() as u32).saturating_sub(w.multi_hits),
            bytes: w.multi_bytes,
        }));
    }
    if req.kind == OpKind::Scan {
        if !w.scan_keys.is_empty() && (!w.scan_reading || w.scan_rereads > 0) {
            // The index answered (or a read was redirected): keys are read next round.
            return None;
        }
        return Some(Ok(Outcome::Scanned {
            records: w.scanned,
            starts_at_key: false,
            bytes: w.scanned_bytes,
        }));
    }
    None
}

/// Applies one reply to its request's progress.
pub(super) fn apply(
    inner: &Inner,
    work: &mut Work,
    batch: &mut Batch,
    p: Pending,
    frame: &Frame<'_>,
) {
    let Work {
        slots,
        keys,
        key_target,
        keys_used,
        current,
        groups,
        group_keys,
        try_again,
        ..
    } = work;
    let w = &mut slots[p.slot];
    w.waiting = w.waiting.saturating_sub(1);
    if let Some(msg) = error_message(frame) {
        if p.part == Part::MGetGroup && inner.slots.is_some() && msg.starts_with("TRYAGAIN") {
            // A slot being resharded holds some of the MGET's keys, its target the
            // others: send the MGET again, to the slot's owner, after a pause (the
            // cluster specification's advice, and redis-rs's wait-and-retry).
            let group = &mut groups[p.key as usize];
            let first = group_keys[group.keys.start];
            let node = inner.route(nth_key(&batch.slots()[p.slot].request, first));
            group.target = Some((node, false));
            w.group_resends += 1;
            *try_again = true;
            return;
        }
        if let Some(r) = frame.redirect() {
            if inner.slots.is_some() {
                if let Some(port) = r.port() {
                    if let Ok(node) = inner.node_index(r.host(), port) {
                        let ask = r.kind == resp::RedirectKind::Ask;
                        if !ask {
                            if let Some(map) = &inner.slots {
                                map.write().expect("slot map lock poisoned").owner
                                    [r.slot as usize] = node;
                            }
                        }
                        if p.part == Part::ScanRead {
                            // One key of a scan: read it again, the others are done.
                            key_target[p.key as usize] = Some((node, ask));
                            w.scan_rereads += 1;
                        } else if p.part == Part::Index {
                            // The index's slot moves, not the key's: the key's command
                            // goes where it went, the index's to the named node.
                            w.index_redirect = Some((node, ask));
                        } else if p.part == Part::MGetGroup {
                            // One slot's keys of a multi-key read: that MGET goes again.
                            groups[p.key as usize].target = Some((node, ask));
                            w.group_resends += 1;
                        } else {
                            w.redirect = Some((node, ask));
                        }
                        return;
                    }
                }
            }
        }
        if !matches!(p.part, Part::Aside | Part::Index) || w.outcome.is_none() {
            w.outcome = Some(Err(crate::error_reply(&msg)));
        }
        return;
    }
    let slot: &mut Slot = &mut batch.slots_mut()[p.slot];
    let result = match p.part {
        Part::Aside | Part::Index => return,
        Part::Write
        | Part::Del
        | Part::Get
        | Part::MGet
        | Part::HGetAll
        | Part::HMGet
        | Part::Command => single_outcome(p.part, frame, &inner.config.layout, slot),
        Part::MGetGroup => match frame.as_aggregate() {
            Some(values) => {
                let req = &slot.request;
                let keys = &group_keys[groups[p.key as usize].keys.clone()];
                for (&k, value) in keys.iter().zip(values.iter()) {
                    if let Some(v) = value.as_bytes() {
                        slot.reply.push(nth_key(req, k), v);
                        w.multi_hits += 1;
                        w.multi_bytes += v.len() as u64;
                    }
                }
                // The outcome is known when every group has answered (`finish`).
                return;
            }
            None => Err(unexpected("MGET", frame)),
        },
        Part::ScanRead => {
            let req = &slot.request;
            current.clear();
            let all = named_fields(req).is_none();
            match hash_reply(frame, req, current, all) {
                Err(e) => Err(e),
                Ok(()) => {
                    if !current.is_empty() {
                        w.scanned += 1;
                        w.scanned_bytes += current.value_bytes() as u64;
                    }
                    return;
                }
            }
        }
        Part::ScanIndex => match frame.as_aggregate() {
            Some(agg) => {
                let start = *keys_used;
                for k in agg.iter() {
                    if let Some(b) = k.as_bytes() {
                        if keys.len() <= *keys_used {
                            keys.push(Vec::new());
                            key_target.push(None);
                        }
                        keys[*keys_used].clear();
                        keys[*keys_used].extend_from_slice(b);
                        key_target[*keys_used] = Some((inner.route(b), false));
                        *keys_used += 1;
                    }
                }
                w.scan_keys = start..*keys_used;
                if w.scan_keys.is_empty() {
                    Ok(Outcome::Scanned {
                        records: 0,
                        starts_at_key: false,
                        bytes: 0,
                    })
                } else {
                    return;
                }
            }
            None => Err(unexpected("ZRANGEBYSCORE/ZRANGEBYLEX", frame)),
        },
        Part::UpdateGet => match frame {
            Frame::Bulk(Some(v)) => {
                let mut value = Vec::new();
                match inner
                    .config
                    .layout
                    .merge_update(v, &slot.request, current, &mut value)
                {
                    Ok(()) => {
                        w.merged = Some(value);
                        return;
                    }
                    Err(e) => Err(e),
                }
            }
            Frame::Bulk(None) | Frame::Null => Ok(Outcome::Miss),
            other => Err(unexpected("GET", other)),
        },
    };
    if w.outcome.as_ref().is_none_or(|o| o.is_ok()) {
        w.outcome = Some(result);
    }
}

pub(super) fn unexpected(command: &str, frame: &Frame<'_>) -> StoreError {
    StoreError::new(
        StoreErrorKind::Protocol,
        format!("{command}: unexpected {} reply", frame.type_name()),
    )
}

/// Fills `reply` from an `HGETALL` reply (pairs) or an `HMGET` reply (values in the
/// order of the request's names; absent fields are nil).
pub(super) fn hash_reply(
    frame: &Frame<'_>,
    req: &Request,
    reply: &mut Record,
    all: bool,
) -> Result<(), StoreError> {
    reply.clear();
    let Some(agg) = frame.as_aggregate() else {
        return Err(unexpected(if all { "HGETALL" } else { "HMGET" }, frame));
    };
    if all {
        for (name, value) in agg.pairs() {
            if let (Some(n), Some(v)) = (name.as_bytes(), value.as_bytes()) {
                reply.push(n, v);
            }
        }
    } else {
        let names = named_fields(req).map(Record::iter).into_iter().flatten();
        for ((name, _), value) in names.zip(agg.iter()) {
            if let Some(v) = value.as_bytes() {
                reply.push(name, v);
            }
        }
    }
    Ok(())
}
