//! The few declarations of WiredTiger 3.2's C API (`/usr/include/wiredtiger.h` from
//! Debian's `libwiredtiger-dev` 3.2.1) that the store calls.
//!
//! WiredTiger's handles are structs of function pointers (`WT_CONNECTION`,
//! `WT_SESSION`, `WT_CURSOR`). They are declared here as `#[repr(C)]` structs whose
//! fields follow the header's order exactly, up to the last method kvlab calls; the
//! library allocates them, so the fields after that are never touched and left out.
//! The header compiles every `#if !defined(SWIG) && !defined(DOXYGEN)` member into the
//! library, so those members are included. The offsets are pinned by a test against
//! values printed with `offsetof` from the header, and the store refuses a library whose
//! version is not 3.2 (checked with `wiredtiger_version`), as the layout changes between
//! releases.

use std::ffi::{c_char, c_int, c_void};

/// `WT_NOTFOUND`: the key was not found (wiredtiger.h, "Error returns").
pub const WT_NOTFOUND: c_int = -31803;

/// `WT_ITEM`: a byte string, the key and value type of `u` formats.
#[repr(C)]
#[derive(Debug)]
pub struct WtItem {
    /// The bytes.
    pub data: *const c_void,
    /// Their length.
    pub size: usize,
    /// Memory owned by WiredTiger (internal).
    pub mem: *mut c_void,
    /// Size of `mem` (internal).
    pub memsize: usize,
    /// Flags (internal).
    pub flags: u32,
}

impl WtItem {
    /// An item pointing at `bytes`, which must outlive every use of the item.
    pub fn of(bytes: &[u8]) -> WtItem {
        WtItem {
            data: bytes.as_ptr().cast(),
            size: bytes.len(),
            mem: std::ptr::null_mut(),
            memsize: 0,
            flags: 0,
        }
    }

    /// An empty item for WiredTiger to fill.
    pub fn empty() -> WtItem {
        WtItem::of(&[])
    }

    /// The bytes the item points at.
    ///
    /// # Safety
    /// `data` must point at `size` readable bytes that stay valid and unchanged for
    /// the returned lifetime (for a cursor's key or value: until the cursor's next
    /// call).
    pub unsafe fn bytes<'a>(&self) -> &'a [u8] {
        if self.size == 0 {
            return &[];
        }
        // SAFETY: guaranteed by the caller.
        unsafe { std::slice::from_raw_parts(self.data.cast(), self.size) }
    }
}

type CursorFn = unsafe extern "C" fn(cursor: *mut WtCursor) -> c_int;

/// `WT_CURSOR`, up to `reconfigure`.
#[repr(C)]
pub struct WtCursor {
    /// The session that opened the cursor.
    pub session: *mut WtSession,
    /// The data source URI.
    pub uri: *const c_char,
    /// The key format.
    pub key_format: *const c_char,
    /// The value format.
    pub value_format: *const c_char,
    /// `get_key(cursor, ...)`: for format `u`, one `WT_ITEM *`.
    pub get_key: unsafe extern "C" fn(cursor: *mut WtCursor, ...) -> c_int,
    /// `get_value(cursor, ...)`: for format `u`, one `WT_ITEM *`.
    pub get_value: unsafe extern "C" fn(cursor: *mut WtCursor, ...) -> c_int,
    /// `set_key(cursor, ...)`: for format `u`, one `WT_ITEM *`.
    pub set_key: unsafe extern "C" fn(cursor: *mut WtCursor, ...),
    /// `set_value(cursor, ...)`: for format `u`, one `WT_ITEM *`.
    pub set_value: unsafe extern "C" fn(cursor: *mut WtCursor, ...),
    /// `compare(cursor, other, &cmp)`.
    pub compare: *const c_void,
    /// `equals(cursor, other, &equal)`.
    pub equals: *const c_void,
    /// Moves to the next record.
    pub next: CursorFn,
    /// Moves to the previous record.
    pub prev: CursorFn,
    /// Releases the cursor's position (and the snapshot and page it pins).
    pub reset: CursorFn,
    /// Positions on the key that was set.
    pub search: CursorFn,
    /// Positions on the key that was set or a neighbour; `exact` < 0, 0, > 0 says which.
    pub search_near: unsafe extern "C" fn(cursor: *mut WtCursor, exact: *mut c_int) -> c_int,
    /// Inserts (with `overwrite`, the default: inserts or replaces) the key and value set.
    pub insert: CursorFn,
    /// `modify(cursor, entries, n)`.
    pub modify: *const c_void,
    /// Updates an existing record.
    pub update: CursorFn,
    /// Removes the key that was set.
    pub remove: CursorFn,
    /// Reserves an update.
    pub reserve: CursorFn,
    /// Closes the cursor.
    pub close: CursorFn,
    /// `reconfigure(cursor, config)`.
    pub reconfigure: *const c_void,
}

type SessionConfigFn =
    unsafe extern "C" fn(session: *mut WtSession, config: *const c_char) -> c_int;
type SessionNameFn = unsafe extern "C" fn(
    session: *mut WtSession,
    name: *const c_char,
    config: *const c_char,
) -> c_int;

/// `WT_SESSION`, up to `transaction_sync`.
#[repr(C)]
pub struct WtSession {
    /// The connection the session belongs to.
    pub connection: *mut WtConnection,
    /// Application data.
    pub app_private: *mut c_void,
    /// Closes the session and every cursor it opened.
    pub close: SessionConfigFn,
    /// `reconfigure(session, config)`.
    pub reconfigure: SessionConfigFn,
    /// `strerror(session, error)`.
    pub strerror: unsafe extern "C" fn(session: *mut WtSession, error: c_int) -> *const c_char,
    /// Opens a cursor on `uri`.
    pub open_cursor: unsafe extern "C" fn(
        session: *mut WtSession,
        uri: *const c_char,
        to_dup: *mut WtCursor,
        config: *const c_char,
        cursorp: *mut *mut WtCursor,
    ) -> c_int,
    /// `alter(session, name, config)`.
    pub alter: SessionNameFn,
    /// Creates a table (succeeds when it exists).
    pub create: SessionNameFn,
    /// `import(session, name, config)`.
    pub import: SessionNameFn,
    /// `compact(session, name, config)`.
    pub compact: SessionNameFn,
    /// `drop(session, name, config)`.
    pub drop: SessionNameFn,
    /// `join(session, join_cursor, ref_cursor, config)`.
    pub join: *const c_void,
    /// `log_flush(session, config)`.
    pub log_flush: SessionConfigFn,
    /// `log_printf(session, format, ...)`.
    pub log_printf: *const c_void,
    /// `rebalance(session, uri, config)`.
    pub rebalance: SessionNameFn,
    /// `rename(session, uri, newuri, config)`.
    pub rename: *const c_void,
    /// `reset(session)`.
    pub reset: unsafe extern "C" fn(session: *mut WtSession) -> c_int,
    /// `salvage(session, name, config)`.
    pub salvage: SessionNameFn,
    /// `truncate(session, name, start, stop, config)`.
    pub truncate: *const c_void,
    /// `upgrade(session, name, config)`.
    pub upgrade: SessionNameFn,
    /// `verify(session, name, config)`.
    pub verify: SessionNameFn,
    /// `begin_transaction(session, config)`.
    pub begin_transaction: SessionConfigFn,
    /// `commit_transaction(session, config)`.
    pub commit_transaction: SessionConfigFn,
    /// `prepare_transaction(session, config)`.
    pub prepare_transaction: SessionConfigFn,
    /// `rollback_transaction(session, config)`.
    pub rollback_transaction: SessionConfigFn,
    /// `timestamp_transaction(session, config)`.
    pub timestamp_transaction: SessionConfigFn,
    /// `query_timestamp(session, hex_timestamp, config)`.
    pub query_timestamp: *const c_void,
    /// Writes a checkpoint of every table.
    pub checkpoint: SessionConfigFn,
    /// `snapshot(session, config)`.
    pub snapshot: SessionConfigFn,
    /// `transaction_pinned_range(session, range)`.
    pub transaction_pinned_range: *const c_void,
    /// `transaction_sync(session, config)`.
    pub transaction_sync: SessionConfigFn,
}

/// `WT_CONNECTION`, up to `open_session`.
#[repr(C)]
pub struct WtConnection {
    /// `async_flush(connection)`.
    pub async_flush: *const c_void,
    /// `async_new_op(connection, uri, config, callback, asyncopp)`.
    pub async_new_op: *const c_void,
    /// Closes the connection and every session still open (checkpointing first).
    pub close: unsafe extern "C" fn(connection: *mut WtConnection, config: *const c_char) -> c_int,
    /// `debug_info(connection, config)`.
    pub debug_info: *const c_void,
    /// `reconfigure(connection, config)`.
    pub reconfigure: *const c_void,
    /// `get_home(connection)`.
    pub get_home: *const c_void,
    /// `configure_method(connection, method, uri, config, type, check)`.
    pub configure_method: *const c_void,
    /// `is_new(connection)`.
    pub is_new: *const c_void,
    /// Opens a session (thread-safe).
    pub open_session: unsafe extern "C" fn(
        connection: *mut WtConnection,
        event_handler: *mut c_void,
        config: *const c_char,
        sessionp: *mut *mut WtSession,
    ) -> c_int,
}

/// `WT_EVENT_HANDLER`: callbacks for error, informational and progress messages.
/// WiredTiger writes its defaults into the `None` entries (other than `handle_close`),
/// so the handler must be writable memory that outlives the connection.
#[repr(C)]
pub struct WtEventHandler {
    /// Called with each error message.
    pub handle_error: Option<
        unsafe extern "C" fn(
            handler: *mut WtEventHandler,
            session: *mut WtSession,
            error: c_int,
            message: *const c_char,
        ) -> c_int,
    >,
    /// Called with each informational message.
    pub handle_message: Option<
        unsafe extern "C" fn(
            handler: *mut WtEventHandler,
            session: *mut WtSession,
            message: *const c_char,
        ) -> c_int,
    >,
    /// Called with progress of long operations (salvage, verify…).
    pub handle_progress: Option<
        unsafe extern "C" fn(
            handler: *mut WtEventHandler,
            session: *mut WtSession,
            operation: *const c_char,
            progress: u64,
        ) -> c_int,
    >,
    /// `handle_close(handler, session, cursor)`.
    pub handle_close: Option<unsafe extern "C" fn()>,
}

#[link(name = "wiredtiger")]
extern "C" {
    /// Opens a connection to the database in `home`.
    pub fn wiredtiger_open(
        home: *const c_char,
        event_handler: *mut WtEventHandler,
        config: *const c_char,
        connectionp: *mut *mut WtConnection,
    ) -> c_int;

    /// The message of an error code (WiredTiger's or `errno`'s); a static string.
    pub fn wiredtiger_strerror(error: c_int) -> *const c_char;

    /// The library's version string; fills the major, minor and patch numbers.
    pub fn wiredtiger_version(
        major: *mut c_int,
        minor: *mut c_int,
        patch: *mut c_int,
    ) -> *const c_char;
}

#[cfg(test)]
mod tests {
    use std::mem::{offset_of, size_of};

    use super::*;

    /// Offsets printed by a C program with `offsetof` over `/usr/include/wiredtiger.h`
    /// (WiredTiger 3.2.1, x86-64): a field added, dropped or moved here breaks this.
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn layouts_match_wiredtiger_3_2_1_header() {
        assert_eq!(size_of::<WtItem>(), 40);
        assert_eq!(size_of::<WtEventHandler>(), 32);
        assert_eq!(offset_of!(WtEventHandler, handle_message), 8);
        assert_eq!(offset_of!(WtItem, flags), 32);
        let cursor = [
            (offset_of!(WtCursor, get_key), 32),
            (offset_of!(WtCursor, get_value), 40),
            (offset_of!(WtCursor, set_key), 48),
            (offset_of!(WtCursor, set_value), 56),
            (offset_of!(WtCursor, next), 80),
            (offset_of!(WtCursor, reset), 96),
            (offset_of!(WtCursor, search), 104),
            (offset_of!(WtCursor, search_near), 112),
            (offset_of!(WtCursor, insert), 120),
            (offset_of!(WtCursor, remove), 144),
            (offset_of!(WtCursor, close), 160),
            (offset_of!(WtCursor, reconfigure), 168),
        ];
        let session = [
            (offset_of!(WtSession, close), 16),
            (offset_of!(WtSession, strerror), 32),
            (offset_of!(WtSession, open_cursor), 40),
            (offset_of!(WtSession, create), 56),
            (offset_of!(WtSession, drop), 80),
            (offset_of!(WtSession, reset), 128),
            (offset_of!(WtSession, begin_transaction), 168),
            (offset_of!(WtSession, commit_transaction), 176),
            (offset_of!(WtSession, rollback_transaction), 192),
            (offset_of!(WtSession, checkpoint), 216),
            (offset_of!(WtSession, transaction_sync), 240),
        ];
        let connection = [
            (offset_of!(WtConnection, close), 16),
            (offset_of!(WtConnection, get_home), 40),
            (offset_of!(WtConnection, open_session), 64),
        ];
        for (i, (got, want)) in cursor.iter().chain(&session).chain(&connection).enumerate() {
            assert_eq!(
                got, want,
                "field {i} of the cursor/session/connection table"
            );
        }
    }
}
