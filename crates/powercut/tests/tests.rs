//! The power-cut file system mounted for real (`/dev/fuse`): what is synced survives a
//! cut, what is not is lost, and a clean unmount keeps everything.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

use kvlab_powercut::{PowerCut, Unsynced};

fn dirs() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let (backing, mnt) = (root.path().join("disk"), root.path().join("mnt"));
    fs::create_dir_all(&backing).unwrap();
    fs::create_dir_all(&mnt).unwrap();
    (root, backing, mnt)
}

fn read(path: &Path) -> Vec<u8> {
    let mut v = Vec::new();
    File::open(path).unwrap().read_to_end(&mut v).unwrap();
    v
}

#[test]
fn a_cut_keeps_what_was_synced_and_loses_the_rest() {
    let (_root, backing, mnt) = dirs();
    fs::write(backing.join("old"), b"on disk before").unwrap();
    let pc = PowerCut::mount(&backing, &mnt).unwrap();

    // Synced whole.
    let mut f = File::create(mnt.join("synced")).unwrap();
    f.write_all(b"hello").unwrap();
    f.sync_all().unwrap();
    // Never synced: the file exists (directory changes are durable), its data does not.
    fs::write(mnt.join("unsynced"), b"world").unwrap();
    // A log: synced up to a point, then appended.
    let mut log = OpenOptions::new()
        .create(true)
        .append(true)
        .open(mnt.join("log"))
        .unwrap();
    log.write_all(b"abc").unwrap();
    log.sync_data().unwrap();
    log.write_all(b"def").unwrap();
    // An old file overwritten in the middle and grown, not synced.
    let old = OpenOptions::new()
        .write(true)
        .open(mnt.join("old"))
        .unwrap();
    old.write_all_at(b"XX", 3).unwrap();
    old.write_all_at(b"!", 20).unwrap();
    // Shrunk, then written past the new end, then synced: the gap reads as zeros.
    let mut t = File::create(mnt.join("shrunk")).unwrap();
    t.write_all(b"0123456789").unwrap();
    t.set_len(2).unwrap();
    t.write_all_at(b"Z", 5).unwrap();
    t.sync_all().unwrap();
    // A synced file renamed into a new directory.
    fs::create_dir(mnt.join("sub")).unwrap();
    fs::rename(mnt.join("synced"), mnt.join("sub/moved")).unwrap();

    // Through the mount, every write is there.
    assert_eq!(read(&mnt.join("sub/moved")), b"hello");
    assert_eq!(read(&mnt.join("unsynced")), b"world");
    assert_eq!(read(&mnt.join("log")), b"abcdef");
    let mut expected_old = b"on XXsk before".to_vec();
    expected_old.resize(20, 0);
    expected_old.push(b'!');
    assert_eq!(read(&mnt.join("old")), expected_old);
    assert_eq!(read(&mnt.join("shrunk")), b"01\0\0\0Z");
    assert_eq!(fs::metadata(mnt.join("old")).unwrap().len(), 21);
    let activity = pc.activity();
    assert_eq!(activity.syncs, 3);
    drop((f, log, old, t));

    let lost = pc.cut().unwrap();
    assert_eq!(
        lost,
        Unsynced {
            files: 3,
            // The pages the three files hold: 5 bytes, 6 (the log's page), 21.
            bytes: 5 + 6 + 21
        }
    );
    assert_eq!(read(&backing.join("sub/moved")), b"hello");
    assert_eq!(read(&backing.join("unsynced")), b"");
    assert_eq!(read(&backing.join("log")), b"abc");
    assert_eq!(read(&backing.join("old")), b"on disk before");
    assert_eq!(read(&backing.join("shrunk")), b"01\0\0\0Z");
    assert!(!backing.join("synced").exists());
}

#[test]
fn a_clean_unmount_keeps_everything_and_a_new_mount_sees_it() {
    let (_root, backing, mnt) = dirs();
    let pc = PowerCut::mount(&backing, &mnt).unwrap();
    fs::write(mnt.join("a"), b"not synced").unwrap();
    let applied = pc.unmount().unwrap();
    assert_eq!(
        applied,
        Unsynced {
            files: 1,
            bytes: 10
        }
    );
    assert_eq!(read(&backing.join("a")), b"not synced");

    // Mounted again, the file reads back, and a cut with nothing written loses nothing.
    let pc = PowerCut::mount(&backing, &mnt).unwrap();
    assert_eq!(read(&mnt.join("a")), b"not synced");
    let names: Vec<_> = fs::read_dir(&mnt)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["a"]);
    fs::remove_file(mnt.join("a")).unwrap();
    assert_eq!(pc.cut().unwrap(), Unsynced::default());
    assert!(!backing.join("a").exists());
}

#[test]
fn a_missing_mount_point_is_an_error_naming_it() {
    let (_root, backing, mnt) = dirs();
    let missing = mnt.join("nope");
    let e = PowerCut::mount(&backing, &missing).unwrap_err();
    assert!(e.to_string().contains("nope"), "{e}");
}

#[test]
fn a_mount_left_by_a_dead_server_is_detached() {
    let (_root, backing, mnt) = dirs();
    // A FUSE mount whose server is gone: mounted on a /dev/fuse descriptor then closed,
    // as a process killed while serving leaves it.
    let dev = std::ffi::CString::new("/dev/fuse").unwrap();
    // SAFETY: a NUL-terminated path.
    let fd = unsafe { libc::open(dev.as_ptr(), libc::O_RDWR) };
    assert!(fd >= 0, "{}", std::io::Error::last_os_error());
    let target = std::ffi::CString::new(mnt.to_str().unwrap()).unwrap();
    let (source, kind) = (c"stale".as_ptr(), c"fuse.stale".as_ptr());
    let opts =
        std::ffi::CString::new(format!("fd={fd},rootmode=40000,user_id=0,group_id=0")).unwrap();
    // SAFETY: NUL-terminated strings that outlive the call.
    let mounted = unsafe { libc::mount(source, target.as_ptr(), kind, 0, opts.as_ptr().cast()) };
    assert_eq!(mounted, 0, "{}", std::io::Error::last_os_error());
    // SAFETY: the descriptor opened above, closed once.
    unsafe { libc::close(fd) };
    let e = fs::metadata(&mnt).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENOTCONN), "{e}");

    assert!(PowerCut::clear_stale(&mnt).unwrap());
    assert!(
        !PowerCut::clear_stale(&mnt).unwrap(),
        "nothing left the second time"
    );
    let pc = PowerCut::mount(&backing, &mnt).unwrap();
    assert!(
        !PowerCut::clear_stale(&mnt).unwrap(),
        "a live mount is left alone"
    );
    fs::write(mnt.join("x"), b"1").unwrap();
    assert_eq!(pc.cut().unwrap(), Unsynced { files: 1, bytes: 1 });
}
