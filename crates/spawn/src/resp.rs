//! A tiny blocking RESP2 client: enough for readiness checks, `CONFIG GET`, cluster set-up
//! and tests. Not for benchmarking — kvlab's stores have real clients.
//!
//! ```no_run
//! # fn main() -> Result<(), kvlab_spawn::SpawnError> {
//! # let addr: std::net::SocketAddr = "127.0.0.1:6379".parse().unwrap();
//! use kvlab_spawn::resp;
//! let reply = resp::command(addr, &["CONFIG", "GET", "maxmemory"])?;
//! assert_eq!(reply.as_array().unwrap()[1].as_str(), Some("67108864"));
//! # Ok(()) }
//! ```

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use kvlab_proto::resp::Frame;

use crate::SpawnError;

/// How long [`command`] waits to connect, and then for each read or write.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// A RESP2 reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// `+OK`: a simple string.
    Simple(String),
    /// `-ERR ...`: an error reply, without the `-`.
    Error(String),
    /// `:42`: an integer.
    Integer(i64),
    /// `$5\r\nhello`: a bulk string; `None` for the null bulk string `$-1`.
    Bulk(Option<Vec<u8>>),
    /// `*2\r\n...`: an array; `None` for the null array `*-1`.
    Array(Option<Vec<Value>>),
}

impl Value {
    /// The text of a simple string or a UTF-8 bulk string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Simple(s) => Some(s),
            Value::Bulk(Some(bytes)) => std::str::from_utf8(bytes).ok(),
            _ => None,
        }
    }

    /// The integer of an integer reply.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Integer(i) => Some(*i),
            _ => None,
        }
    }

    /// The elements of a non-null array.
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(Some(items)) => Some(items),
            _ => None,
        }
    }
}

/// A blocking byte stream: TCP or a UNIX domain socket.
trait Stream: Read + Write + Send + std::fmt::Debug {}
impl<T: Read + Write + Send + std::fmt::Debug> Stream for T {}

/// One connection to a Redis server, over TCP or a UNIX domain socket. Commands are
/// encoded and replies parsed by kvlab's RESP codec ([`kvlab_proto::resp`]).
#[derive(Debug)]
pub struct Connection {
    stream: Box<dyn Stream>,
    /// Bytes read but not yet parsed.
    buf: Vec<u8>,
}

impl Connection {
    /// Connects to `addr`, waiting at most `timeout`, which also bounds each later read
    /// and write.
    pub fn connect(addr: SocketAddr, timeout: Duration) -> Result<Connection, SpawnError> {
        let stream = TcpStream::connect_timeout(&addr, timeout)
            .map_err(|e| SpawnError::io(format!("connecting to {addr}"), e))?;
        let setup = |stream: &TcpStream| -> std::io::Result<()> {
            stream.set_read_timeout(Some(timeout))?;
            stream.set_write_timeout(Some(timeout))?;
            stream.set_nodelay(true)
        };
        setup(&stream).map_err(|e| SpawnError::io(format!("configuring socket to {addr}"), e))?;
        Ok(Connection::over(Box::new(stream)))
    }

    /// Connects to the UNIX domain socket at `path`; `timeout` bounds each read and write.
    pub fn connect_unix(path: &Path, timeout: Duration) -> Result<Connection, SpawnError> {
        let shown = path.display();
        let stream = UnixStream::connect(path)
            .map_err(|e| SpawnError::io(format!("connecting to {shown}"), e))?;
        let setup = |stream: &UnixStream| -> std::io::Result<()> {
            stream.set_read_timeout(Some(timeout))?;
            stream.set_write_timeout(Some(timeout))
        };
        setup(&stream).map_err(|e| SpawnError::io(format!("configuring socket {shown}"), e))?;
        Ok(Connection::over(Box::new(stream)))
    }

    fn over(stream: Box<dyn Stream>) -> Connection {
        Connection {
            stream,
            buf: Vec::new(),
        }
    }

    /// Sends one command and reads its reply. An error reply is returned as
    /// [`Value::Error`], not as an `Err`.
    pub fn call(&mut self, args: &[&str]) -> Result<Value, SpawnError> {
        let mut request = Vec::new();
        kvlab_proto::resp::encode_command(&mut request, args);
        self.stream
            .write_all(&request)
            .map_err(|e| SpawnError::io("sending a RESP command", e))?;
        loop {
            if let Some((value, used)) = parse_value(&self.buf)? {
                self.buf.drain(..used);
                return Ok(value);
            }
            let mut chunk = [0u8; 16 * 1024];
            let n = self
                .stream
                .read(&mut chunk)
                .map_err(|e| SpawnError::io("reading a RESP reply", e))?;
            if n == 0 {
                return Err(SpawnError::Protocol("connection closed".into()));
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}

/// Connects to `addr`, sends one command and returns its reply; an error reply becomes
/// [`SpawnError::Redis`]. Uses [`DEFAULT_TIMEOUT`].
pub fn command(addr: SocketAddr, args: &[&str]) -> Result<Value, SpawnError> {
    let reply = Connection::connect(addr, DEFAULT_TIMEOUT)?.call(args)?;
    match reply {
        Value::Error(message) => Err(SpawnError::Redis {
            command: args.join(" "),
            message,
        }),
        other => Ok(other),
    }
}

/// The first whole reply in `buf` and the bytes it took; `None` while it is incomplete.
fn parse_value(buf: &[u8]) -> Result<Option<(Value, usize)>, SpawnError> {
    match kvlab_proto::resp::parse(buf) {
        Ok(Some((frame, used))) => Ok(Some((Value::from_frame(frame), used))),
        Ok(None) => Ok(None),
        Err(e) => Err(SpawnError::Protocol(e.to_string())),
    }
}

impl Value {
    /// An owned copy of a parsed frame. RESP3 types (which a server sends only after
    /// `HELLO 3`) map to their nearest RESP2 kind.
    fn from_frame(frame: Frame<'_>) -> Value {
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        let all = |a: kvlab_proto::resp::Aggregate<'_>| a.iter().map(Value::from_frame).collect();
        match frame {
            Frame::SimpleString(s) => Value::Simple(text(s)),
            Frame::Error(e) | Frame::BulkError(e) => Value::Error(text(e)),
            Frame::Integer(i) => Value::Integer(i),
            Frame::Bulk(b) => Value::Bulk(b.map(<[u8]>::to_vec)),
            Frame::Null => Value::Bulk(None),
            Frame::Array(a) => Value::Array(a.map(all)),
            Frame::Map(a) | Frame::Set(a) | Frame::Push(a) => Value::Array(Some(all(a))),
            Frame::Boolean(b) => Value::Integer(i64::from(b)),
            Frame::Double(d) => Value::Simple(d.to_string()),
            Frame::BigNumber(n) => Value::Simple(text(n)),
            Frame::VerbatimString { text: t, .. } => Value::Bulk(Some(t.to_vec())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one whole reply `bytes` hold; an incomplete one is an error here.
    fn parse(bytes: &[u8]) -> Result<Value, SpawnError> {
        match parse_value(bytes)? {
            Some((v, used)) if used == bytes.len() => Ok(v),
            Some(_) => Err(SpawnError::Protocol("trailing bytes".into())),
            None => Err(SpawnError::Protocol("incomplete".into())),
        }
    }

    #[test]
    fn parses_replies() {
        assert_eq!(parse(b"+PONG\r\n").unwrap(), Value::Simple("PONG".into()));
        assert_eq!(
            parse(b"-LOADING busy\r\n").unwrap(),
            Value::Error("LOADING busy".into())
        );
        assert_eq!(parse(b":-3\r\n").unwrap(), Value::Integer(-3));
        assert_eq!(parse(b"$-1\r\n").unwrap(), Value::Bulk(None));
        assert_eq!(parse(b"*-1\r\n").unwrap(), Value::Array(None));
        let v = parse(b"*2\r\n$9\r\nmaxmemory\r\n$8\r\n67108864\r\n").unwrap();
        let items = v.as_array().unwrap();
        assert_eq!(items[0].as_str(), Some("maxmemory"));
        assert_eq!(items[1].as_str(), Some("67108864"));
        let nested = parse(b"*1\r\n*3\r\n:0\r\n:5460\r\n*0\r\n").unwrap();
        assert_eq!(
            nested.as_array().unwrap()[0].as_array().unwrap()[1].as_int(),
            Some(5460)
        );
    }

    #[test]
    fn rejects_broken_replies() {
        for bad in [
            &b""[..],
            b"+OK\n",
            b"?x\r\n",
            b"$5\r\nab\r\n",
            b":x\r\n",
            b"*2\r\n:1\r\n",
        ] {
            assert!(parse(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
