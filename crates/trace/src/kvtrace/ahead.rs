//! Decoding blocks ahead: a [`DecoderPool`] of threads decompresses and decodes the
//! blocks the reading thread hands it, and gives them back in file order.
//!
//! Memory is bounded by the slots: each holds one block's compressed bytes and its
//! decoded columns, [`SLOTS_PER_THREAD`] per thread are in flight at most, and a slot
//! handed out comes back ([`DecoderPool::give_back`]) to carry a later block, so its
//! buffers are reused and reading allocates nothing per record.

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::{Decoded, KvtraceBlock, Unpacker};
use crate::TraceError;

/// Blocks in flight per decoder thread: one being decoded, one waiting, so that a
/// thread never idles while the reader hands out records.
const SLOTS_PER_THREAD: usize = 2;

/// One block on its way through the pool: compressed, then decoded.
#[derive(Default)]
pub(super) struct Slot {
    /// The block's position in the file (0, 1, …).
    seq: u64,
    pub(super) block: KvtraceBlock,
    pub(super) decoded: Decoded,
    /// Why the block did not decode.
    error: Option<TraceError>,
    /// The panic of the thread that decoded it (a bug), raised again on the reader's
    /// thread.
    panic: Option<Box<dyn Any + Send>>,
}

impl Slot {
    /// Ok when the block decoded; its error otherwise (taken). A decoder thread's panic
    /// is raised again here.
    pub(super) fn result(&mut self) -> Result<(), TraceError> {
        if let Some(p) = self.panic.take() {
            panic::resume_unwind(p);
        }
        self.error.take().map_or(Ok(()), Err)
    }
}

/// Decoder threads, the slots in flight between them and the reader, and the blocks
/// that came back before their turn.
pub(super) struct DecoderPool {
    /// Blocks to decode; dropped to stop the threads.
    jobs: Option<Sender<Box<Slot>>>,
    /// Decoded blocks, in whatever order the threads finish them.
    decoded: Receiver<Box<Slot>>,
    threads: Vec<JoinHandle<()>>,
    /// Slots not in flight.
    #[expect(
        clippy::vec_box,
        reason = "a slot (its columns inline) moves between threads as one pointer"
    )]
    free: Vec<Box<Slot>>,
    /// Decoded blocks waiting for their turn, at `seq % arrived.len()`: at most
    /// `arrived.len()` are in flight, so their places differ.
    arrived: Vec<Option<Box<Slot>>>,
    /// The next block's number to submit, and to hand out.
    next_submit: u64,
    next_out: u64,
    /// The file, for errors.
    path: PathBuf,
}

impl DecoderPool {
    /// Starts `threads` decoder threads for the file `path` (named in errors); `None`
    /// when not one thread could be started (the reader then decodes on its own
    /// thread).
    pub(super) fn start(path: &Path, threads: usize) -> Result<Option<DecoderPool>, TraceError> {
        let (jobs, queue) = mpsc::channel::<Box<Slot>>();
        let queue = Arc::new(Mutex::new(queue));
        let (done, decoded) = mpsc::channel();
        let mut handles = Vec::with_capacity(threads);
        for i in 0..threads {
            let unpacker = Unpacker::new(path)?;
            let (queue, done) = (Arc::clone(&queue), done.clone());
            let spawned = std::thread::Builder::new()
                .name(format!("kvtrace-decode-{i}"))
                .spawn(move || decode_blocks(unpacker, &queue, &done));
            match spawned {
                Ok(h) => handles.push(h),
                // Fewer threads than asked for still read the file.
                Err(_) => break,
            }
        }
        if handles.is_empty() {
            return Ok(None);
        }
        let slots = SLOTS_PER_THREAD * handles.len();
        Ok(Some(DecoderPool {
            jobs: Some(jobs),
            decoded,
            threads: handles,
            free: (0..slots).map(|_| Box::default()).collect(),
            arrived: (0..slots).map(|_| None).collect(),
            next_submit: 0,
            next_out: 0,
            path: path.to_path_buf(),
        }))
    }

    /// True when another block can be submitted.
    pub(super) fn has_free_slot(&self) -> bool {
        !self.free.is_empty()
    }

    /// Blocks submitted and not yet handed out.
    pub(super) fn in_flight(&self) -> usize {
        (self.next_submit - self.next_out) as usize
    }

    /// Submits the next block of the file, which `fill` writes into a free slot's
    /// block. The caller guarantees that [`DecoderPool::has_free_slot`] is true.
    pub(super) fn submit(
        &mut self,
        fill: impl FnOnce(&mut KvtraceBlock),
    ) -> Result<(), TraceError> {
        let mut slot = self
            .free
            .pop()
            .expect("a block is submitted only when a slot is free");
        fill(&mut slot.block);
        slot.seq = self.next_submit;
        self.next_submit += 1;
        let jobs = self
            .jobs
            .as_ref()
            .expect("the job queue lives until the pool is dropped");
        jobs.send(slot).map_err(|_| self.stopped())
    }

    /// The next block in file order, decoded (or with its error), waiting for it if
    /// need be. The caller guarantees that [`DecoderPool::in_flight`] is not 0.
    pub(super) fn next_in_order(&mut self) -> Result<Box<Slot>, TraceError> {
        debug_assert!(
            self.in_flight() > 0,
            "a block is awaited only when one is in flight"
        );
        let places = self.arrived.len() as u64;
        loop {
            let place = (self.next_out % places) as usize;
            if let Some(slot) = self.arrived[place].take() {
                self.next_out += 1;
                return Ok(slot);
            }
            let slot = self.decoded.recv().map_err(|_| self.stopped())?;
            let at = (slot.seq % places) as usize;
            self.arrived[at] = Some(slot);
        }
    }

    /// Returns a slot handed out by [`DecoderPool::next_in_order`], whose records are
    /// all read, for a later block.
    pub(super) fn give_back(&mut self, slot: Box<Slot>) {
        self.free.push(slot);
    }

    /// The error when every decoder thread is gone with blocks still in flight (a
    /// thread panicked, which the reader raises as soon as that block's turn comes).
    fn stopped(&self) -> TraceError {
        TraceError::Io {
            path: self.path.clone(),
            source: std::io::Error::other("the kvtrace decoder threads stopped"),
        }
    }
}

impl Drop for DecoderPool {
    /// Closes the job queue, so that each thread ends after the block it is decoding,
    /// and waits for them.
    fn drop(&mut self) {
        self.jobs = None;
        for t in self.threads.drain(..) {
            // A thread's panic was caught and handed to the reader already.
            let _ = t.join();
        }
    }
}

/// A decoder thread: decodes the blocks of `queue` into their slots and sends them to
/// `done`, until the queue closes or the reader is gone.
fn decode_blocks(
    mut unpacker: Unpacker,
    queue: &Mutex<Receiver<Box<Slot>>>,
    done: &Sender<Box<Slot>>,
) {
    loop {
        // One thread waits on the queue at a time, the others on the lock.
        let job = match queue.lock() {
            Ok(q) => q.recv(),
            Err(_) => return,
        };
        let Ok(mut slot) = job else {
            return;
        };
        let slot_ref = &mut *slot;
        let r = panic::catch_unwind(AssertUnwindSafe(|| {
            unpacker.unpack_block(&slot_ref.block, &mut slot_ref.decoded)
        }));
        let panicked = match r {
            Ok(r) => {
                slot.error = r.err();
                false
            }
            Err(p) => {
                slot.panic = Some(p);
                true
            }
        };
        if done.send(slot).is_err() || panicked {
            return;
        }
    }
}
