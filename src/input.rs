//! Reading files that come from the analysed tree, which gil-lint must treat as untrusted: a pull
//! request can turn any of them into a FIFO, a device, a socket, a symbolic link to `/dev/zero`
//! or a file too big to hold.
//!
//! [`read_regular`] is the one way such a file is read: it never blocks on opening (a FIFO with no
//! writer), reads only regular files (checked on the opened handle, so a file swapped after the
//! check is caught too), and never allocates or reads more than its limit allows. Its error is a
//! one-line [`InputError`] that names the file and never quotes its contents. Configuration and
//! knowledge files must be UTF-8 ([`read_text`]); source files need not be ([`read_source`]).

use std::fmt;
use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// Why a file could not be read.
#[derive(Debug)]
pub enum InputErrorKind {
    /// Opening, inspecting or reading it failed.
    Io(io::Error),
    /// It is not a regular file: `what` is "a FIFO", "a directory", "a character device", ...
    NotRegular { what: &'static str },
    /// It is larger than `limit` bytes.
    TooLarge { limit: u64 },
    /// It has a NUL byte at this offset (asked for text).
    Binary { offset: usize },
    /// It is not valid UTF-8 from this offset on (asked for UTF-8 text).
    NotUtf8 { offset: usize },
}

/// A file that could not be read: its path and why. [`fmt::Display`] gives one line, the path with
/// control characters escaped, and never anything of the file's contents.
#[derive(Debug)]
pub struct InputError {
    pub path: PathBuf,
    pub kind: InputErrorKind,
}

impl InputError {
    fn new(path: &Path, kind: InputErrorKind) -> Self {
        InputError {
            path: path.to_path_buf(),
            kind,
        }
    }

    /// The reason alone, for a caller that words the rest: "No such file or directory (os error
    /// 2)", "not a regular file (a FIFO)", "larger than 1 MiB", "binary file (NUL byte 12)".
    pub fn detail(&self) -> String {
        self.kind.reason()
    }
}

impl InputErrorKind {
    /// The reason in words, as [`InputError::detail`] gives it.
    pub fn reason(&self) -> String {
        match self {
            InputErrorKind::Io(err) => one_line(&err.to_string()),
            InputErrorKind::NotRegular { what } => format!("not a regular file ({what})"),
            InputErrorKind::TooLarge { limit } => format!("larger than {}", bytes(*limit)),
            InputErrorKind::Binary { offset } => format!("binary file (NUL byte {offset})"),
            InputErrorKind::NotUtf8 { offset } => format!("not valid UTF-8 (byte {offset})"),
        }
    }
}

impl fmt::Display for InputError {
    /// `path: cannot read: <I/O error>`, or `path: <detail>` for the other kinds.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = shown(&self.path);
        match self.kind {
            InputErrorKind::Io(_) => write!(f, "{path}: cannot read: {}", self.detail()),
            _ => write!(f, "{path}: {}", self.detail()),
        }
    }
}

impl std::error::Error for InputError {}

/// A path for a one-line message: control characters (a newline in a file name, a terminal
/// escape) are escaped.
pub fn shown(path: &Path) -> String {
    escape_controls(&path.display().to_string())
}

/// A message on one line: runs of whitespace (newlines included) become one space, and other
/// control characters are escaped.
pub fn one_line(message: &str) -> String {
    escape_controls(&message.split_whitespace().collect::<Vec<_>>().join(" "))
}

fn escape_controls(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let escaped: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            escaped
        })
        .collect()
}

/// The directory `path` is in: `.` for a bare file name.
pub fn parent_dir(path: &Path) -> &Path {
    path.parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// `1 MiB`, `64 KiB`, `1000 bytes`.
pub fn bytes(n: u64) -> String {
    const KIB: u64 = 1 << 10;
    const MIB: u64 = 1 << 20;
    if n >= MIB && n.is_multiple_of(MIB) {
        format!("{} MiB", n / MIB)
    } else if n >= KIB && n.is_multiple_of(KIB) {
        format!("{} KiB", n / KIB)
    } else {
        format!("{n} bytes")
    }
}

/// A size as people write it: `4194304`, `512KiB`, `4 MiB`, `1GiB` (`K`, `M`, `G` and `KB`, `MB`,
/// `GB` mean the same binary units).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        _ => return Err(format!("`{text}` is not a size (e.g. 4MiB, 512KiB)")),
    };
    number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
        .ok_or_else(|| format!("`{text}` is not a size (e.g. 4MiB, 512KiB)"))
}

/// What a file that is not regular is, for a message.
pub fn kind_of(metadata: &Metadata) -> &'static str {
    let file_type = metadata.file_type();
    if file_type.is_dir() {
        return "a directory";
    }
    if file_type.is_symlink() {
        return "a symbolic link";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO";
        }
        if file_type.is_char_device() {
            return "a character device";
        }
        if file_type.is_block_device() {
            return "a block device";
        }
        if file_type.is_socket() {
            return "a socket";
        }
    }
    "not a file"
}

/// Opens `path` for reading without blocking: a FIFO with no writer (or a terminal, a serial
/// line) would otherwise block in `open` itself, before anything could be checked. Nor does a
/// terminal become the process's controlling terminal.
fn open_nonblocking(path: &Path) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    options.open(path)
}

/// Reads the regular file at `path` (symbolic links followed), at most `limit` bytes.
///
/// - It is checked with `stat` before it is opened, so a device or FIFO is never opened (opening
///   one can have effects), and again with `fstat` on the opened handle, so a file replaced in
///   between is caught too.
/// - It is opened with `O_NONBLOCK`: opening a FIFO cannot block, and a regular file that would
///   block on a read (`/proc/kmsg`) gives an error instead.
/// - At most `limit + 1` bytes are read, into a buffer that never grows past `limit + 1` bytes, and
///   more than `limit` is an error; a file whose size is known to be over the limit is not read.
///   Files that report no size (`/proc`) are read up to the limit like the others.
pub fn read_regular(path: &Path, limit: u64) -> Result<Vec<u8>, InputError> {
    let error = |kind| InputError::new(path, kind);
    let before = std::fs::metadata(path).map_err(|e| error(InputErrorKind::Io(e)))?;
    check_regular(&before, limit).map_err(error)?;
    let file = open_nonblocking(path).map_err(|e| error(InputErrorKind::Io(e)))?;
    read_opened(file, limit).map_err(error)
}

/// [`read_regular`], then the bytes as UTF-8 text without NUL bytes.
pub fn read_text(path: &Path, limit: u64) -> Result<String, InputError> {
    let bytes = read_regular(path, limit)?;
    if let Some(offset) = memchr::memchr(0, &bytes) {
        return Err(InputError::new(path, InputErrorKind::Binary { offset }));
    }
    String::from_utf8(bytes).map_err(|e| {
        InputError::new(
            path,
            InputErrorKind::NotUtf8 {
                offset: e.utf8_error().valid_up_to(),
            },
        )
    })
}

/// [`read_regular`], then the bytes as source text ([`source_text`]): a file without NUL bytes,
/// in UTF-8 or not.
pub fn read_source(path: &Path, limit: u64) -> Result<String, InputError> {
    source_text(read_regular(path, limit)?).map_err(|kind| InputError::new(path, kind))
}

/// Source code as compilers read it: UTF-8 where it is valid, and each other byte as the
/// Latin-1 character of that value, since GCC, Clang and MSVC accept such bytes in comments and
/// strings (a Latin-1 `©` in a licence header). Lines and character columns stay those of the
/// file. A NUL byte makes it binary, not source.
pub fn source_text(bytes: Vec<u8>) -> Result<String, InputErrorKind> {
    if let Some(offset) = memchr::memchr(0, &bytes) {
        return Err(InputErrorKind::Binary { offset });
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(err) => {
            let bytes = err.into_bytes();
            let mut text = String::with_capacity(bytes.len() + bytes.len() / 8);
            for chunk in bytes.utf8_chunks() {
                text.push_str(chunk.valid());
                text.extend(chunk.invalid().iter().map(|&b| char::from(b)));
            }
            Ok(text)
        }
    }
}

/// Whether `metadata` is that of a regular file of at most `limit` bytes.
pub fn check_regular(metadata: &Metadata, limit: u64) -> Result<(), InputErrorKind> {
    if !metadata.is_file() {
        return Err(InputErrorKind::NotRegular {
            what: kind_of(metadata),
        });
    }
    if metadata.len() > limit {
        return Err(InputErrorKind::TooLarge { limit });
    }
    Ok(())
}

/// Checks the opened file (`fstat`) and reads it, the buffer bounded by `limit + 1` bytes.
fn read_opened(mut file: File, limit: u64) -> Result<Vec<u8>, InputErrorKind> {
    let metadata = file.metadata().map_err(InputErrorKind::Io)?;
    check_regular(&metadata, limit)?;
    // One byte more than the limit tells a file of exactly `limit` bytes from a longer one.
    let most = usize::try_from(limit.saturating_add(1)).unwrap_or(usize::MAX);
    // The size the file reports, plus the byte that finds its end; 8 KiB when it reports none.
    let first = usize::try_from(metadata.len())
        .unwrap_or(usize::MAX)
        .saturating_add(1)
        .max(8 << 10)
        .min(most);
    let mut buffer: Vec<u8> = Vec::new();
    buffer
        .try_reserve_exact(first)
        .map_err(|_| InputErrorKind::TooLarge { limit })?;
    buffer.resize(first, 0);
    let mut filled = 0;
    loop {
        if filled == buffer.len() {
            if buffer.len() >= most {
                break;
            }
            let grown = buffer.len().saturating_mul(2).min(most);
            buffer
                .try_reserve_exact(grown - buffer.len())
                .map_err(|_| InputErrorKind::TooLarge { limit })?;
            buffer.resize(grown, 0);
        }
        match file.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(InputErrorKind::Io(e)),
        }
    }
    if filled as u64 > limit {
        return Err(InputErrorKind::TooLarge { limit });
    }
    buffer.truncate(filled);
    Ok(buffer)
}

/// `path:line:col: message`, 1-based, for a byte range of `text`; nothing of `text` itself is
/// shown. The path's control characters are escaped, so the message stays on one line.
pub(crate) fn located(
    path: &Path,
    text: &str,
    at: Option<std::ops::Range<usize>>,
    message: &str,
) -> String {
    match at {
        Some(range) => {
            let mut offset = range.start.min(text.len());
            while !text.is_char_boundary(offset) {
                offset -= 1;
            }
            let before = &text[..offset];
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            format!("{}:{line}:{column}: {message}", shown(path))
        }
        None => format!("{}: {message}", shown(path)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `f` on another thread and fails if it takes more than 30 seconds (a hang).
    fn within_seconds<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        let (send, receive) = std::sync::mpsc::channel();
        std::thread::spawn(move || send.send(f()));
        receive
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("the read hung")
    }

    fn mkfifo(path: &Path) -> bool {
        let made = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .is_ok_and(|s| s.success());
        if !made {
            eprintln!("skipped: mkfifo is not available");
        }
        made
    }

    fn assert_one_line(err: &InputError, path: &Path, detail: &str) {
        let line = err.to_string();
        assert!(!line.contains('\n'), "{line}");
        assert!(line.starts_with(&shown(path)), "{line}");
        assert!(err.detail().contains(detail), "{line}");
    }

    #[test]
    fn a_regular_file_is_read_up_to_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.toml");
        std::fs::write(&path, b"0123456789").unwrap();
        assert_eq!(read_regular(&path, 10).unwrap(), b"0123456789");
        assert_eq!(read_regular(&path, 1000).unwrap(), b"0123456789");
        let err = read_regular(&path, 9).unwrap_err();
        assert!(matches!(err.kind, InputErrorKind::TooLarge { limit: 9 }));
        assert_eq!(
            err.to_string(),
            format!("{}: larger than 9 bytes", shown(&path))
        );
        std::fs::write(&path, b"").unwrap();
        assert_eq!(read_regular(&path, 0).unwrap(), b"");
    }

    #[test]
    fn the_buffer_never_grows_past_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big");
        std::fs::write(&path, vec![b'x'; 100_000]).unwrap();
        let read = read_regular(&path, 100_000).unwrap();
        assert_eq!(read.len(), 100_000);
        assert!(read.capacity() <= 100_001, "{}", read.capacity());
    }

    #[cfg(unix)]
    #[test]
    fn a_file_that_reports_no_size_is_still_capped() {
        // `/proc` files are regular, report a size of 0 and can be long.
        let maps = Path::new("/proc/self/maps");
        if !maps.exists() {
            eprintln!("skipped: no /proc");
            return;
        }
        let err = read_regular(maps, 16).unwrap_err();
        assert!(matches!(err.kind, InputErrorKind::TooLarge { limit: 16 }));
        assert_eq!(err.detail(), "larger than 16 bytes");
    }

    #[cfg(unix)]
    #[test]
    fn dev_zero_is_refused_without_reading() {
        let err = within_seconds(|| read_regular(Path::new("/dev/zero"), 1 << 20).unwrap_err());
        assert!(matches!(
            err.kind,
            InputErrorKind::NotRegular {
                what: "a character device"
            }
        ));
        assert_eq!(
            err.to_string(),
            "/dev/zero: not a regular file (a character device)"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_to_dev_zero_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("knowledge.toml");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        let err = within_seconds({
            let link = link.clone();
            move || read_regular(&link, 1 << 20).unwrap_err()
        });
        assert_one_line(&err, &link, "not a regular file (a character device)");
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_never_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo.toml");
        if !mkfifo(&fifo) {
            return;
        }
        let err = within_seconds({
            let fifo = fifo.clone();
            move || read_regular(&fifo, 1 << 20).unwrap_err()
        });
        assert_one_line(&err, &fifo, "not a regular file (a FIFO)");
        // A FIFO that replaces the file between the check and the open: the open does not block,
        // and the check on the opened handle refuses it.
        let err = within_seconds(move || {
            let file = open_nonblocking(&fifo).unwrap();
            read_opened(file, 1 << 20).unwrap_err()
        });
        assert!(matches!(err, InputErrorKind::NotRegular { what: "a FIFO" }));
    }

    #[cfg(unix)]
    #[test]
    fn a_socket_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sock");
        let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let err = within_seconds(move || read_regular(&path, 1 << 20).unwrap_err());
        assert!(matches!(
            err.kind,
            InputErrorKind::NotRegular { what: "a socket" }
        ));
    }

    #[test]
    fn a_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let err = read_regular(dir.path(), 1 << 20).unwrap_err();
        assert_one_line(&err, dir.path(), "not a regular file (a directory)");
    }

    #[test]
    fn a_missing_file_says_why_on_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad\nname.toml");
        let err = read_regular(&path, 1 << 20).unwrap_err();
        let line = err.to_string();
        assert!(line.contains("bad\\nname.toml: cannot read: "), "{line}");
        assert!(!line.contains('\n'), "{line}");
    }

    #[test]
    fn text_is_utf8_without_nul_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        std::fs::write(&path, "café\n").unwrap();
        assert_eq!(read_text(&path, 100).unwrap(), "café\n");
        std::fs::write(&path, b"SECRET=1\0OTHER=2\0").unwrap();
        let err = read_text(&path, 100).unwrap_err();
        assert_eq!(err.detail(), "binary file (NUL byte 8)");
        assert!(!err.to_string().contains("SECRET"));
        std::fs::write(&path, b"caf\xe9").unwrap();
        assert_eq!(
            read_text(&path, 100).unwrap_err().detail(),
            "not valid UTF-8 (byte 3)"
        );
    }

    #[test]
    fn source_that_is_not_utf8_is_read_as_latin1_where_invalid() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.cpp");
        // A Latin-1 comment, then valid UTF-8: each keeps its one character per letter.
        std::fs::write(&path, b"// caf\xe9 \xa9\nint x; // \xc3\xa9t\xc3\xa9\n").unwrap();
        assert_eq!(
            read_source(&path, 100).unwrap(),
            "// café ©\nint x; // été\n"
        );
        std::fs::write(&path, b"int\0x").unwrap();
        assert_eq!(
            read_source(&path, 100).unwrap_err().detail(),
            "binary file (NUL byte 3)"
        );
    }

    #[test]
    fn sizes_are_read_as_people_write_them() {
        assert_eq!(parse_size("4194304"), Ok(4 << 20));
        assert_eq!(parse_size("4MiB"), Ok(4 << 20));
        assert_eq!(parse_size(" 512 kb "), Ok(512 << 10));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert!(parse_size("4 MiBs").is_err());
        assert!(parse_size("MiB").is_err());
        assert!(parse_size("99999999999999999999G").is_err());
    }

    #[test]
    fn sizes_are_written_for_people() {
        assert_eq!(bytes(1 << 20), "1 MiB");
        assert_eq!(bytes(64 << 20), "64 MiB");
        assert_eq!(bytes(4096), "4 KiB");
        assert_eq!(bytes(1000), "1000 bytes");
    }
}
