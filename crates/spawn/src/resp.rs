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

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

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

/// One connection to a Redis server, over TCP or a UNIX domain socket.
#[derive(Debug)]
pub struct Connection {
    reader: BufReader<Box<dyn Stream>>,
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
        Ok(Connection {
            reader: BufReader::new(Box::new(stream)),
        })
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
        Ok(Connection {
            reader: BufReader::new(Box::new(stream)),
        })
    }

    /// Sends one command and reads its reply. An error reply is returned as
    /// [`Value::Error`], not as an `Err`.
    pub fn call(&mut self, args: &[&str]) -> Result<Value, SpawnError> {
        let mut request = format!("*{}\r\n", args.len()).into_bytes();
        for arg in args {
            request.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
            request.extend_from_slice(arg.as_bytes());
            request.extend_from_slice(b"\r\n");
        }
        self.reader
            .get_mut()
            .write_all(&request)
            .map_err(|e| SpawnError::io("sending a RESP command", e))?;
        read_value(&mut self.reader)
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

fn read_line(reader: &mut impl BufRead) -> Result<String, SpawnError> {
    let mut line = Vec::new();
    reader
        .read_until(b'\n', &mut line)
        .map_err(|e| SpawnError::io("reading a RESP reply", e))?;
    if line.is_empty() {
        return Err(SpawnError::Protocol("connection closed".into()));
    }
    if !line.ends_with(b"\r\n") {
        return Err(SpawnError::Protocol(format!(
            "line without CRLF: {:?}",
            String::from_utf8_lossy(&line)
        )));
    }
    line.truncate(line.len() - 2);
    String::from_utf8(line).map_err(|e| SpawnError::Protocol(format!("non-UTF-8 line: {e}")))
}

fn read_value(reader: &mut impl BufRead) -> Result<Value, SpawnError> {
    let line = read_line(reader)?;
    let Some(kind) = line.chars().next() else {
        return Err(SpawnError::Protocol("empty reply line".into()));
    };
    let rest = &line[1..];
    let number = || -> Result<i64, SpawnError> {
        rest.parse::<i64>()
            .map_err(|e| SpawnError::Protocol(format!("bad number in {line:?}: {e}")))
    };
    match kind {
        '+' => Ok(Value::Simple(rest.to_string())),
        '-' => Ok(Value::Error(rest.to_string())),
        ':' => Ok(Value::Integer(number()?)),
        '$' => {
            let Ok(len) = usize::try_from(number()?) else {
                return Ok(Value::Bulk(None));
            };
            let mut data = vec![0; len + 2];
            reader
                .read_exact(&mut data)
                .map_err(|e| SpawnError::io("reading a RESP bulk string", e))?;
            if !data.ends_with(b"\r\n") {
                return Err(SpawnError::Protocol("bulk string without CRLF".into()));
            }
            data.truncate(len);
            Ok(Value::Bulk(Some(data)))
        }
        '*' => {
            let Ok(len) = usize::try_from(number()?) else {
                return Ok(Value::Array(None));
            };
            let items = (0..len)
                .map(|_| read_value(reader))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Value::Array(Some(items)))
        }
        other => Err(SpawnError::Protocol(format!(
            "unknown reply type {other:?} in {line:?}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(bytes: &[u8]) -> Result<Value, SpawnError> {
        read_value(&mut &bytes[..])
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
