//! What the load examples share: one HTTP/1.1 request and its answer on a kept-alive loopback
//! connection, read by hand so that a lookup's time is the socket's and the service's, not a
//! client library's.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The runtime every load example runs on: two worker threads, as the machine's two cores.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}

/// Sends `request` and reads its answer into `buf` (cleared first): the status and the head,
/// once the whole body (`content-length` bytes; none without one) is in. `None`: the connection
/// broke or the answer is not HTTP/1.1.
pub async fn exchange<'b>(
    stream: &mut TcpStream,
    request: &[u8],
    buf: &'b mut Vec<u8>,
) -> Option<(u16, &'b str)> {
    buf.clear();
    stream.write_all(request).await.ok()?;
    let head_end = loop {
        if let Some(end) = memchr::memmem::find(buf, b"\r\n\r\n") {
            break end + 4;
        }
        if read_more(stream, buf).await? == 0 {
            return None;
        }
    };
    let length: usize = {
        let head = std::str::from_utf8(&buf[..head_end]).ok()?;
        header(head, "content-length").map_or(Some(0), |v| v.parse().ok())?
    };
    while buf.len() < head_end + length {
        if read_more(stream, buf).await? == 0 {
            return None;
        }
    }
    let head = std::str::from_utf8(&buf[..head_end]).ok()?;
    let status: u16 = head.get(9..12)?.parse().ok()?;
    Some((status, head))
}

/// The value of the header `name` (any case) in an answer's `head`.
pub fn header<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    head.lines().find_map(|line| {
        let (n, value) = line.split_once(':')?;
        n.eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

/// Reads what the socket has into `buf`'s end; the bytes read (0: closed).
async fn read_more(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<usize> {
    let len = buf.len();
    buf.resize(len + 16 * 1024, 0);
    let read = stream.read(&mut buf[len..]).await;
    let n = read.as_ref().map_or(0, |n| *n);
    buf.truncate(len + n);
    read.ok()
}
