#!/usr/bin/env python3
"""networld.py: the stand-in servers of the network test world (networld.h).

  networld.py world DIR       in the world's network namespace: TLS on
                              0.0.0.0:443 and :8443 (DIR/server.pem and
                              server.key), plain HTTP on :80, a DNS stub on
                              198.18.0.53:53/udp answering NXDOMAIN
  networld.py host DIR NAME   in the test's namespace: the services a
                              sandbox must never reach: TCP on 127.0.0.1:443,
                              [::1]:443, 198.18.1.1:443 and 127.0.0.1:<any>
                              (its port in DIR/secret.port), and the abstract
                              unix socket @NAME

Every connection, TLS handshake, request and DNS query becomes a line of
DIR/world.log or DIR/host.log, written whole and flushed at once; DIR/<mode>.ready
appears once every socket listens.  Stdlib only.  It runs until killed.
"""
import os
import socket
import ssl
import struct
import sys
import threading

BODY = b"hqt-world-ok\n"
lock = threading.Lock()
log_file = None


def log(line):
    with lock:
        log_file.write(line + "\n")
        log_file.flush()


def listen_tcp(family, addr, port):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # A test may put a server of its own on one address of the world at
    # the same port (networld_spawn: e2e-net's model API on 198.18.0.2:443);
    # the kernel hands that address's connections to the more specific
    # listener, and every other address's still to us.
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    if family == socket.AF_INET6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    s.bind((addr, port))
    s.listen(64)
    return s


def where(sock):
    a = sock.getsockname()
    if not isinstance(a, tuple):
        return "@" + a[1:].decode(errors="replace")
    return ("[%s]:%d" if ":" in a[0] else "%s:%d") % (a[0], a[1])


def read_head(conn):
    """The request line and headers, up to 16 KiB."""
    data = b""
    while b"\r\n\r\n" not in data and len(data) < 16384:
        chunk = conn.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


def answer(conn, scheme, sni):
    head = read_head(conn).decode("latin-1", "replace")
    lines = head.split("\r\n")
    parts = lines[0].split(" ") if lines else []
    host = ""
    for h in lines[1:]:
        if h.lower().startswith("host:"):
            host = h[5:].strip()
    if len(parts) >= 2:
        log("request %s %s %s host=%s sni=%s" % (scheme, parts[0], parts[1], host, sni))
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n"
                 b"Connection: close\r\n\r\n" % len(BODY) + BODY)


def serve_conn(conn, peer, local, ctx):
    try:
        log("accept %s from %s" % (local, peer))
        conn.settimeout(10)
        if ctx is None:
            answer(conn, "http", "-")
            return
        names = []

        def sni_cb(sslobj, name, _ctx):
            names.append(name or "-")

        ctx.sni_callback = sni_cb
        tls = ctx.wrap_socket(conn, server_side=True)
        sni = names[0] if names else "-"
        log("tls %s sni=%s" % (local, sni))
        answer(tls, "https", sni)
        tls.close()
    except (OSError, ssl.SSLError) as e:
        log("error %s %s" % (local, type(e).__name__))
    finally:
        try:
            conn.close()
        except OSError:
            pass


def accept_loop(sock, ctx_factory):
    while True:
        conn, peer = sock.accept()
        p = peer[0] if isinstance(peer, tuple) and peer else "unix"
        ctx = ctx_factory() if ctx_factory else None
        threading.Thread(target=serve_conn, args=(conn, p, where(conn), ctx),
                         daemon=True).start()


def record_loop(sock):
    """The host's services: record who came and hang up."""
    while True:
        conn, peer = sock.accept()
        p = peer[0] if isinstance(peer, tuple) and peer else "unix"
        log("accept %s from %s" % (where(conn), p))
        conn.close()


def qname(pkt):
    labels, i = [], 12
    while i < len(pkt):
        n = pkt[i]
        if n == 0:
            i += 1
            break
        if n & 0xC0 or i + 1 + n > len(pkt):
            return None, None, None
        labels.append(pkt[i + 1:i + 1 + n].decode("ascii", "replace"))
        i += 1 + n
    if i + 4 > len(pkt):
        return None, None, None
    qtype = struct.unpack("!H", pkt[i:i + 2])[0]
    return ".".join(labels).lower(), qtype, i + 4


def dns_loop(sock):
    types = {1: "A", 28: "AAAA", 12: "PTR", 33: "SRV", 5: "CNAME", 16: "TXT", 65: "HTTPS"}
    while True:
        pkt, peer = sock.recvfrom(4096)
        if len(pkt) < 12:
            continue
        name, qtype, end = qname(pkt)
        if name is None:
            log("dns ? malformed")
            continue
        log("dns %s %s" % (name, types.get(qtype, str(qtype))))
        ident, flags = struct.unpack("!HH", pkt[:4])
        # A response, the question echoed, recursion available, NXDOMAIN.
        reply = struct.pack("!HHHHHH", ident, 0x8000 | (flags & 0x0100) | 0x0080 | 3,
                            1, 0, 0, 0) + pkt[12:end]
        sock.sendto(reply, peer)


def main():
    global log_file
    mode, d = sys.argv[1], sys.argv[2]
    log_file = open(os.path.join(d, mode + ".log"), "a", buffering=1)
    threads = []
    if mode == "world":
        def tls_ctx():
            c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            c.load_cert_chain(os.path.join(d, "server.pem"), os.path.join(d, "server.key"))
            return c
        tls_ctx()  # the certificate loads, or we fail before saying ready
        for port in (443, 8443):
            threads.append((accept_loop, (listen_tcp(socket.AF_INET, "0.0.0.0", port), tls_ctx)))
        threads.append((accept_loop, (listen_tcp(socket.AF_INET, "0.0.0.0", 80), None)))
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.bind(("198.18.0.53", 53))
        threads.append((dns_loop, (u,)))
    elif mode == "host":
        name = sys.argv[3]
        for fam, addr, port in ((socket.AF_INET, "127.0.0.1", 443), (socket.AF_INET6, "::1", 443),
                                (socket.AF_INET, "198.18.1.1", 443)):
            threads.append((record_loop, (listen_tcp(fam, addr, port),)))
        secret = listen_tcp(socket.AF_INET, "127.0.0.1", 0)
        threads.append((record_loop, (secret,)))
        with open(os.path.join(d, "secret.port.new"), "w") as f:
            f.write("%d\n" % secret.getsockname()[1])
        os.rename(os.path.join(d, "secret.port.new"), os.path.join(d, "secret.port"))
        a = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        a.bind("\0" + name)
        a.listen(16)
        threads.append((record_loop, (a,)))
    else:
        sys.exit("networld.py: unknown mode " + mode)
    for fn, args in threads:
        threading.Thread(target=fn, args=args, daemon=True).start()
    open(os.path.join(d, mode + ".ready"), "w").close()
    threading.Event().wait()


if __name__ == "__main__":
    main()
