//! A power cut for crash tests: a FUSE file system over a directory that keeps what a
//! program writes only once the program syncs it, and forgets the rest on a cut.
//!
//! Killing a process loses nothing it wrote: its data sits in the kernel's page cache and
//! reaches the disk later. A power cut loses everything not yet synced, which is what a
//! store's durability settings (RocksDB's `sync`, LMDB's `MDB_NOSYNC`, WiredTiger's log
//! sync) are about. [`PowerCut::mount`] serves a backing directory at a mount point:
//! reads and directory changes go to the backing directory, but file data written through
//! the mount is held in memory until an `fsync`/`fdatasync` of the file applies it to the
//! backing file (and syncs that). [`PowerCut::cut`] unmounts and drops whatever was not
//! synced, leaving the backing directory as the disk would be after the power came back
//! — the model of db_stress's fault-injection file system and of LazyFS.
//!
//! Directory changes (creating, removing and renaming files and directories) are durable
//! at once, as on a file system that journals its metadata in order; a file created and
//! never synced comes back empty.
//!
//! Mounting needs `/dev/fuse` and the right to mount (root, or `CAP_SYS_ADMIN`).

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fuser::{
    BackgroundSession, Config, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags,
    Generation, INodeNo, LockOwner, MountOption, OpenFlags, RenameFlags, ReplyAttr, ReplyCreate,
    ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request,
    TimeOrNow, WriteFlags,
};

/// How long the kernel may cache names and attributes. Every change goes through the
/// kernel, so its caches stay right.
const TTL: Duration = Duration::from_secs(1);

/// What a power cut (or a clean unmount) found unsynced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Unsynced {
    /// Files with writes not yet synced.
    pub files: u64,
    /// Their bytes held in written, unsynced pages of 4 KiB (up to each file's length):
    /// what the cut drops.
    pub bytes: u64,
}

/// What the file system did while mounted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Activity {
    /// Bytes the kernel handed over to be written (it writes whole dirty ranges of its
    /// page cache, so a rewritten page counts again).
    pub written_bytes: u64,
    /// `fsync`/`fdatasync` calls on files.
    pub syncs: u64,
    /// Bytes handed over since each file's previous sync, applied by those syncs.
    pub synced_bytes: u64,
}

/// A mounted power-cut file system ([`PowerCut::mount`]).
pub struct PowerCut {
    state: Arc<Mutex<State>>,
    session: Option<BackgroundSession>,
    mountpoint: PathBuf,
}

impl std::fmt::Debug for PowerCut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PowerCut")
            .field("mountpoint", &self.mountpoint)
            .finish_non_exhaustive()
    }
}

impl PowerCut {
    /// Serves `backing` (an existing directory) at `mountpoint` (an existing, empty
    /// directory) until [`PowerCut::cut`] or [`PowerCut::unmount`].
    pub fn mount(backing: &Path, mountpoint: &Path) -> io::Result<PowerCut> {
        let backing = backing.canonicalize()?;
        if !backing.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a directory", backing.display()),
            ));
        }
        let state = Arc::new(Mutex::new(State::new(backing)));
        let mut config = Config::default();
        config.mount_options = vec![
            MountOption::FSName("kvlab-powercut".into()),
            MountOption::Subtype("kvlab-powercut".into()),
        ];
        let fs = PowerCutFs {
            state: state.clone(),
        };
        let session = fuser::spawn_mount(fs, mountpoint, &config).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "mounting the power-cut file system at {} (needs /dev/fuse and the right \
                     to mount): {e}",
                    mountpoint.display()
                ),
            )
        })?;
        Ok(PowerCut {
            state,
            session: Some(session),
            mountpoint: mountpoint.to_path_buf(),
        })
    }

    /// Takes down what a process that died while serving `mountpoint` left there: a
    /// mount whose server is gone ("transport endpoint is not connected") is detached.
    /// Returns whether there was one; a healthy mount, or none, is left alone.
    pub fn clear_stale(mountpoint: &Path) -> io::Result<bool> {
        match std::fs::metadata(mountpoint) {
            Err(e) if e.raw_os_error() == Some(libc::ENOTCONN) => {
                let path = std::ffi::CString::new(mountpoint.as_os_str().as_encoded_bytes())
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
                // SAFETY: `path` is a NUL-terminated string that outlives the call.
                if unsafe { libc::umount2(path.as_ptr(), libc::MNT_DETACH) } != 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Where the file system is mounted.
    pub fn mountpoint(&self) -> &Path {
        &self.mountpoint
    }

    /// What has been written and synced so far.
    pub fn activity(&self) -> Activity {
        lock(&self.state).activity
    }

    /// The power goes out: unmounts, and every write not yet synced is lost. Call it once
    /// the programs writing through the mount are gone. Returns what was lost.
    pub fn cut(mut self) -> io::Result<Unsynced> {
        // What the kernel still holds in its page cache is lost too; hand it over first
        // (`syncfs` writes dirty pages back, it does not sync them here) so it is counted.
        // Only the count depends on it: a failure to write back loses the same data.
        let _ = self.write_back();
        let lost = {
            let mut state = lock(&self.state);
            let lost = state.unsynced();
            state.pending.clear();
            state.cut = true;
            lost
        };
        self.unmount_now()?;
        Ok(lost)
    }

    /// A clean shutdown: applies every unsynced write to the backing files (as the
    /// kernel would write its dirty pages back), then unmounts. Returns what it applied.
    pub fn unmount(mut self) -> io::Result<Unsynced> {
        // Dirty pages still in the kernel first, so that they are applied too.
        let _ = self.write_back();
        let applied = {
            let mut state = lock(&self.state);
            let applied = state.unsynced();
            let inos: Vec<u64> = state.pending.keys().copied().collect();
            for ino in inos {
                state.sync(ino)?;
            }
            applied
        };
        self.unmount_now()?;
        Ok(applied)
    }

    /// Asks the kernel to write the mount's dirty pages back to the file system.
    fn write_back(&self) -> io::Result<()> {
        let dir = File::open(&self.mountpoint)?;
        // SAFETY: a descriptor this function owns, open for the call.
        if unsafe { libc::syncfs(std::os::fd::AsRawFd::as_raw_fd(&dir)) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    fn unmount_now(&mut self) -> io::Result<()> {
        match self.session.take() {
            Some(session) => session.umount_and_join(),
            None => Ok(()),
        }
    }
}

impl Drop for PowerCut {
    fn drop(&mut self) {
        // Dropped without cut or unmount: the power goes out.
        lock(&self.state).pending.clear();
        let _ = self.unmount_now();
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|p| p.into_inner())
}

/// The unit of the in-memory overlay of unsynced data.
const PAGE: u64 = 4096;

/// A file's unsynced data: the pages written since its last sync, over the backing file.
#[derive(Debug)]
struct Pending {
    /// Page number → the page as programs see it (whole pages: read from the backing file
    /// when first written).
    pages: BTreeMap<u64, Box<[u8]>>,
    /// The length programs see.
    len: u64,
    /// From this offset on, bytes no page holds read as zeros, not as the backing file's
    /// (the file was shrunk to here since its last sync); `u64::MAX`: never.
    floor: u64,
    /// Bytes written since the last sync (overwrites counted).
    bytes: u64,
}

/// Reads `buf.len()` bytes of `file` at `offset`; zeros past its end.
fn read_full(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    let mut got = 0;
    while got < buf.len() {
        match file.read_at(&mut buf[got..], offset + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buf[got..].fill(0);
    Ok(())
}

impl Pending {
    /// Bytes `[offset, offset + buf.len())` as programs see them, given the backing file.
    fn read(&self, backing: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
        read_full(backing, buf, offset)?;
        let end = offset + buf.len() as u64;
        if self.floor < end {
            buf[(self.floor.max(offset) - offset) as usize..].fill(0);
        }
        for (&n, page) in self.pages.range(offset / PAGE..end.div_ceil(PAGE)) {
            let (start, stop) = ((n * PAGE).max(offset), ((n + 1) * PAGE).min(end));
            buf[(start - offset) as usize..(stop - offset) as usize]
                .copy_from_slice(&page[(start - n * PAGE) as usize..(stop - n * PAGE) as usize]);
        }
        Ok(())
    }

    fn write(&mut self, backing: &File, offset: u64, data: &[u8]) -> io::Result<()> {
        let end = offset + data.len() as u64;
        for n in offset / PAGE..end.div_ceil(PAGE) {
            if !self.pages.contains_key(&n) {
                let mut page = vec![0u8; PAGE as usize].into_boxed_slice();
                self.read(backing, &mut page, n * PAGE)?;
                self.pages.insert(n, page);
            }
            let page = self.pages.get_mut(&n).expect("inserted above");
            let (start, stop) = ((n * PAGE).max(offset), ((n + 1) * PAGE).min(end));
            page[(start - n * PAGE) as usize..(stop - n * PAGE) as usize]
                .copy_from_slice(&data[(start - offset) as usize..(stop - offset) as usize]);
        }
        self.len = self.len.max(end);
        self.bytes += data.len() as u64;
        Ok(())
    }

    fn set_len(&mut self, len: u64) {
        // Whatever lies past the shorter of the two lengths reads as zeros from now on.
        let cut = len.min(self.len);
        self.floor = self.floor.min(cut);
        self.pages.retain(|&n, _| n * PAGE < cut);
        if let Some(page) = self.pages.get_mut(&(cut / PAGE)) {
            page[(cut % PAGE) as usize..].fill(0);
        }
        self.len = len;
    }

    /// The bytes of the file held in unsynced pages (up to its length).
    fn unsynced_bytes(&self) -> u64 {
        self.pages
            .keys()
            .map(|&n| self.len.saturating_sub(n * PAGE).min(PAGE))
            .sum()
    }

    /// Applies the pages to `file` (opened for writing) and gives it the right length.
    fn apply(&self, file: &File) -> io::Result<()> {
        if self.floor < file.metadata()?.len() {
            file.set_len(self.floor)?;
        }
        for (&n, page) in &self.pages {
            let take = (self.len.saturating_sub(n * PAGE)).min(PAGE) as usize;
            file.write_all_at(&page[..take], n * PAGE)?;
        }
        file.set_len(self.len)
    }
}

struct State {
    backing: PathBuf,
    /// Inode number → path relative to the backing directory (the root is empty).
    paths: HashMap<u64, PathBuf>,
    inos: HashMap<PathBuf, u64>,
    next_ino: u64,
    /// Open files: read handles on the backing files.
    handles: HashMap<u64, File>,
    next_fh: u64,
    pending: HashMap<u64, Pending>,
    activity: Activity,
    /// After a cut, nothing more is written.
    cut: bool,
}

impl State {
    fn new(backing: PathBuf) -> State {
        let mut s = State {
            backing,
            paths: HashMap::new(),
            inos: HashMap::new(),
            next_ino: 2,
            handles: HashMap::new(),
            next_fh: 1,
            pending: HashMap::new(),
            activity: Activity::default(),
            cut: false,
        };
        s.paths.insert(1, PathBuf::new());
        s.inos.insert(PathBuf::new(), 1);
        s
    }

    fn unsynced(&self) -> Unsynced {
        Unsynced {
            files: self.pending.len() as u64,
            bytes: self.pending.values().map(Pending::unsynced_bytes).sum(),
        }
    }

    fn path(&self, ino: INodeNo) -> Result<PathBuf, Errno> {
        self.paths.get(&ino.0).cloned().ok_or(Errno::ENOENT)
    }

    fn full(&self, rel: &Path) -> PathBuf {
        self.backing.join(rel)
    }

    fn child(&self, parent: INodeNo, name: &OsStr) -> Result<PathBuf, Errno> {
        Ok(self.path(parent)?.join(name))
    }

    fn intern(&mut self, rel: PathBuf) -> u64 {
        if let Some(&ino) = self.inos.get(&rel) {
            return ino;
        }
        let ino = self.next_ino;
        self.next_ino += 1;
        self.paths.insert(ino, rel.clone());
        self.inos.insert(rel, ino);
        ino
    }

    fn forget_path(&mut self, rel: &Path) {
        if let Some(ino) = self.inos.remove(rel) {
            self.paths.remove(&ino);
            self.pending.remove(&ino);
        }
    }

    fn attr(&self, ino: u64, rel: &Path) -> Result<FileAttr, Errno> {
        let meta = std::fs::symlink_metadata(self.full(rel)).map_err(errno)?;
        let kind = if meta.is_dir() {
            FileType::Directory
        } else if meta.file_type().is_symlink() {
            FileType::Symlink
        } else {
            FileType::RegularFile
        };
        let size = self.pending.get(&ino).map_or(meta.len(), |p| p.len);
        let time = |secs: i64, nanos: i64| {
            UNIX_EPOCH + Duration::new(secs.max(0) as u64, nanos.clamp(0, 999_999_999) as u32)
        };
        Ok(FileAttr {
            ino: INodeNo(ino),
            size,
            blocks: size.div_ceil(512),
            atime: time(meta.atime(), meta.atime_nsec()),
            mtime: time(meta.mtime(), meta.mtime_nsec()),
            ctime: time(meta.ctime(), meta.ctime_nsec()),
            crtime: time(meta.ctime(), meta.ctime_nsec()),
            kind,
            perm: (meta.mode() & 0o7777) as u16,
            nlink: meta.nlink() as u32,
            uid: meta.uid(),
            gid: meta.gid(),
            rdev: 0,
            blksize: 4096,
            flags: 0,
        })
    }

    /// The file's length as programs see it.
    fn len(&self, ino: u64) -> Result<u64, Errno> {
        if let Some(p) = self.pending.get(&ino) {
            return Ok(p.len);
        }
        let rel = self.paths.get(&ino).ok_or(Errno::ENOENT)?;
        Ok(std::fs::metadata(self.full(rel)).map_err(errno)?.len())
    }

    /// The file's unsynced data, started from its backing file.
    fn pending(&mut self, ino: u64) -> Result<&mut Pending, Errno> {
        if !self.pending.contains_key(&ino) {
            let rel = self.paths.get(&ino).ok_or(Errno::ENOENT)?;
            let len = std::fs::metadata(self.backing.join(rel))
                .map_err(errno)?
                .len();
            self.pending.insert(
                ino,
                Pending {
                    pages: BTreeMap::new(),
                    len,
                    floor: u64::MAX,
                    bytes: 0,
                },
            );
        }
        Ok(self.pending.get_mut(&ino).expect("inserted above"))
    }

    fn write(&mut self, ino: u64, fh: u64, offset: u64, data: &[u8]) -> Result<(), Errno> {
        if !self.paths.contains_key(&ino) {
            // The kernel writing back pages of a file removed since: nothing to keep.
            return Ok(());
        }
        self.pending(ino)?;
        // The open file's handle on the backing file (a new one if it was closed).
        let opened;
        let backing = match self.handles.get(&fh) {
            Some(f) => f,
            None => {
                let rel = self.paths.get(&ino).ok_or(Errno::ENOENT)?;
                opened = File::open(self.backing.join(rel)).map_err(errno)?;
                &opened
            }
        };
        let pending = self.pending.get_mut(&ino).expect("made above");
        pending.write(backing, offset, data).map_err(errno)
    }

    fn set_len(&mut self, ino: u64, len: u64) -> Result<(), Errno> {
        self.pending(ino)?.set_len(len);
        Ok(())
    }

    /// Reads `size` bytes at `offset` as the program sees them: the backing file under
    /// the unsynced pages.
    fn read(&self, ino: u64, fh: u64, offset: u64, size: u32) -> Result<Vec<u8>, Errno> {
        let file = self.handles.get(&fh).ok_or(Errno::EBADF)?;
        let pending = self.pending.get(&ino);
        let len = match pending {
            Some(p) => p.len,
            None => file.metadata().map_err(errno)?.len(),
        };
        let end = (offset + u64::from(size)).min(len);
        if offset >= end {
            return Ok(Vec::new());
        }
        let mut buf = vec![0u8; (end - offset) as usize];
        match pending {
            Some(p) => p.read(file, &mut buf, offset),
            None => read_full(file, &mut buf, offset),
        }
        .map_err(errno)?;
        Ok(buf)
    }

    /// Applies the file's unsynced data to its backing file and syncs it.
    fn sync(&mut self, ino: u64) -> io::Result<()> {
        let Some(p) = self.pending.remove(&ino) else {
            return Ok(());
        };
        let Some(rel) = self.paths.get(&ino) else {
            return Ok(());
        };
        let file = OpenOptions::new()
            .write(true)
            .open(self.backing.join(rel))?;
        p.apply(&file)?;
        file.sync_data()?;
        self.activity.syncs += 1;
        self.activity.synced_bytes += p.bytes;
        Ok(())
    }

    fn open_handle(&mut self, rel: &Path) -> Result<u64, Errno> {
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(self.full(rel))
            .map_err(errno)?;
        let fh = self.next_fh;
        self.next_fh += 1;
        self.handles.insert(fh, file);
        Ok(fh)
    }
}

fn errno(e: io::Error) -> Errno {
    Errno::from(e)
}

struct PowerCutFs {
    state: Arc<Mutex<State>>,
}

impl PowerCutFs {
    fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    fn entry(&self, rel: PathBuf, reply: ReplyEntry) {
        let mut s = self.state();
        let ino = s.intern(rel.clone());
        match s.attr(ino, &rel) {
            Ok(attr) => reply.entry(&TTL, &attr, Generation(0)),
            Err(e) => reply.error(e),
        }
    }
}

impl PowerCutFs {
    /// Removes a file or directory (`remove`) from the backing directory, and forgets it.
    fn remove(
        &self,
        parent: INodeNo,
        name: &OsStr,
        remove: fn(&Path) -> io::Result<()>,
        reply: ReplyEmpty,
    ) {
        let mut s = self.state();
        let result = s.child(parent, name).and_then(|rel| {
            remove(&s.full(&rel)).map_err(errno)?;
            s.forget_path(&rel);
            Ok(())
        });
        match result {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }
}

impl Filesystem for PowerCutFs {
    fn init(&mut self, _req: &Request, config: &mut fuser::KernelConfig) -> io::Result<()> {
        // The kernel gathers writes in its page cache and hands them over in pages, and
        // flushes a file's before its fsync: the same durability, far fewer round trips.
        let _ = config.add_capabilities(fuser::InitFlags::FUSE_WRITEBACK_CACHE);
        Ok(())
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let rel = match self.state().child(parent, name) {
            Ok(rel) => rel,
            Err(e) => return reply.error(e),
        };
        if let Err(e) = std::fs::symlink_metadata(self.state().full(&rel)) {
            return reply.error(errno(e));
        }
        self.entry(rel, reply);
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        let s = self.state();
        match s.path(ino).and_then(|rel| s.attr(ino.0, &rel)) {
            Ok(attr) => reply.attr(&TTL, &attr),
            Err(e) => reply.error(e),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<TimeOrNow>,
        _mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let mut s = self.state();
        let result = (|| {
            let rel = s.path(ino)?;
            if let Some(mode) = mode {
                std::fs::set_permissions(
                    s.full(&rel),
                    std::fs::Permissions::from_mode(mode & 0o7777),
                )
                .map_err(errno)?;
            }
            if let Some(size) = size {
                s.set_len(ino.0, size)?;
            }
            s.attr(ino.0, &rel)
        })();
        match result {
            Ok(attr) => reply.attr(&TTL, &attr),
            Err(e) => reply.error(e),
        }
    }

    fn mkdir(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        reply: ReplyEntry,
    ) {
        let rel = match self.state().child(parent, name) {
            Ok(rel) => rel,
            Err(e) => return reply.error(e),
        };
        let full = self.state().full(&rel);
        let made = std::fs::create_dir(&full).and_then(|()| {
            std::fs::set_permissions(
                &full,
                std::fs::Permissions::from_mode(mode & !umask & 0o7777),
            )
        });
        match made {
            Ok(()) => self.entry(rel, reply),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        self.remove(parent, name, |p| std::fs::remove_file(p), reply);
    }

    fn rmdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        self.remove(parent, name, |p| std::fs::remove_dir(p), reply);
    }

    fn rename(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        if !flags.is_empty() {
            return reply.error(Errno::EINVAL);
        }
        let mut s = self.state();
        let result = (|| {
            let (from, to) = (s.child(parent, name)?, s.child(newparent, newname)?);
            std::fs::rename(s.full(&from), s.full(&to)).map_err(errno)?;
            // What the target was is gone; what was under the source moves.
            s.forget_path(&to);
            let moved: Vec<(PathBuf, u64)> = s
                .inos
                .iter()
                .filter(|(p, _)| p.starts_with(&from))
                .map(|(p, &i)| (p.clone(), i))
                .collect();
            for (old, ino) in moved {
                let under = old.strip_prefix(&from).expect("filtered by prefix");
                // (`join("")` would add a trailing slash.)
                let new = if under.as_os_str().is_empty() {
                    to.clone()
                } else {
                    to.join(under)
                };
                s.inos.remove(&old);
                s.inos.insert(new.clone(), ino);
                s.paths.insert(ino, new);
            }
            Ok(())
        })();
        match result {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        let mut s = self.state();
        let result = (|| {
            let rel = s.path(ino)?;
            let fh = s.open_handle(&rel)?;
            if flags.0 & libc::O_TRUNC != 0 {
                s.set_len(ino.0, 0)?;
            }
            Ok(fh)
        })();
        match result {
            Ok(fh) => reply.opened(FileHandle(fh), FopenFlags::empty()),
            Err(e) => reply.error(e),
        }
    }

    fn create(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        flags: i32,
        reply: ReplyCreate,
    ) {
        let mut s = self.state();
        let result = (|| {
            let rel = s.child(parent, name)?;
            let full = s.full(&rel);
            let existed = full.exists();
            OpenOptions::new()
                .write(true)
                .create(true)
                .create_new(flags & libc::O_EXCL != 0)
                .mode(mode & !umask & 0o7777)
                .open(&full)
                .map_err(errno)?;
            let ino = s.intern(rel.clone());
            if existed && flags & libc::O_TRUNC != 0 {
                s.set_len(ino, 0)?;
            }
            let fh = s.open_handle(&rel)?;
            Ok((s.attr(ino, &rel)?, fh))
        })();
        match result {
            Ok((attr, fh)) => reply.created(
                &TTL,
                &attr,
                Generation(0),
                FileHandle(fh),
                FopenFlags::empty(),
            ),
            Err(e) => reply.error(e),
        }
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        match self.state().read(ino.0, fh.0, offset, size) {
            Ok(data) => reply.data(&data),
            Err(e) => reply.error(e),
        }
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let mut s = self.state();
        if s.cut {
            return reply.error(Errno::EIO);
        }
        match s.write(ino.0, fh.0, offset, data) {
            Ok(()) => {
                s.activity.written_bytes += data.len() as u64;
                reply.written(data.len() as u32)
            }
            Err(e) => reply.error(e),
        }
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }

    fn release(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        self.state().handles.remove(&fh.0);
        reply.ok();
    }

    fn fsync(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        let mut s = self.state();
        if s.cut {
            return reply.error(Errno::EIO);
        }
        match s.sync(ino.0) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn fsyncdir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        // Directory changes are durable as they are made.
        reply.ok();
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let mut s = self.state();
        let rel = match s.path(ino) {
            Ok(rel) => rel,
            Err(e) => return reply.error(e),
        };
        let listing = match std::fs::read_dir(s.full(&rel)) {
            Ok(l) => l,
            Err(e) => return reply.error(errno(e)),
        };
        let mut entries = vec![
            (ino.0, FileType::Directory, ".".into()),
            (ino.0, FileType::Directory, "..".into()),
        ];
        for entry in listing.flatten() {
            let kind = match entry.file_type() {
                Ok(t) if t.is_dir() => FileType::Directory,
                Ok(t) if t.is_symlink() => FileType::Symlink,
                _ => FileType::RegularFile,
            };
            let child = s.intern(rel.join(entry.file_name()));
            entries.push((child, kind, entry.file_name()));
        }
        for (i, (child, kind, name)) in entries.into_iter().enumerate().skip(offset as usize) {
            if reply.add(INodeNo(child), i as u64 + 1, kind, name) {
                break;
            }
        }
        reply.ok();
    }

    fn access(&self, _req: &Request, ino: INodeNo, _mask: fuser::AccessFlags, reply: ReplyEmpty) {
        // Whoever may mount may read and write here; only existence is checked.
        match self.state().path(ino) {
            Ok(_) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn getxattr(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _name: &OsStr,
        _size: u32,
        reply: fuser::ReplyXattr,
    ) {
        // No extended attributes (the kernel stops asking).
        reply.error(Errno::EOPNOTSUPP);
    }

    fn listxattr(&self, _req: &Request, _ino: INodeNo, _size: u32, reply: fuser::ReplyXattr) {
        reply.error(Errno::EOPNOTSUPP);
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        // Room enough for any test: 1 TiB in 4 KiB blocks, a million inodes.
        reply.statfs(1 << 28, 1 << 28, 1 << 28, 1 << 20, 1 << 20, 4096, 255, 4096);
    }

    fn fallocate(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        let mut s = self.state();
        let result = match mode {
            // Reserving space without changing the length changes nothing a reader sees.
            libc::FALLOC_FL_KEEP_SIZE => Ok(()),
            0 => s.len(ino.0).and_then(|len| {
                if offset + length > len {
                    s.set_len(ino.0, offset + length)
                } else {
                    Ok(())
                }
            }),
            _ => Err(Errno::EOPNOTSUPP),
        };
        match result {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(len: u64) -> Pending {
        Pending {
            pages: BTreeMap::new(),
            len,
            floor: u64::MAX,
            bytes: 0,
        }
    }

    fn seen(p: &Pending, backing: &File) -> Vec<u8> {
        let mut buf = vec![0u8; p.len as usize];
        p.read(backing, &mut buf, 0).unwrap();
        buf
    }

    #[test]
    fn pages_over_the_backing_file_read_and_apply_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        // Two and a half pages on disk.
        let disk: Vec<u8> = (0..10_240u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &disk).unwrap();
        let backing = File::open(&path).unwrap();
        let mut p = pending(disk.len() as u64);
        let mut expected = disk.clone();

        // A write across a page boundary, then a shrink into the second page, then growth
        // past the old end: the shrunk-off bytes come back as zeros, not from the disk.
        p.write(&backing, 4090, b"ABCDEFGHIJ").unwrap();
        expected[4090..4100].copy_from_slice(b"ABCDEFGHIJ");
        assert_eq!(seen(&p, &backing), expected);
        p.set_len(5000);
        p.set_len(12_000);
        expected.truncate(5000);
        expected.resize(12_000, 0);
        assert_eq!(seen(&p, &backing), expected);
        p.write(&backing, 11_000, b"z").unwrap();
        expected[11_000] = b'z';
        assert_eq!(seen(&p, &backing), expected);
        // Pages 0, 1 and 2 (11 000 is in page 2), the last up to the length 12 000.
        assert_eq!(p.unsynced_bytes(), 12_000);

        let file = OpenOptions::new().write(true).open(&path).unwrap();
        p.apply(&file).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), expected);
    }
}
