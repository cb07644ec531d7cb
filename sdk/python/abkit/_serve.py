"""go-plugin's side of the process boundary, for a Python plugin: the
cookie check, the handshake line, mutual TLS and the services go-plugin's
host calls besides abkit's own (GRPCController, health)."""

import base64
import json
import os
import signal
import sys
import threading
import time
from concurrent import futures

import grpc

from abkit.v1 import abkit_pb2_grpc as pbg

from . import MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE, PROTOCOL_VERSION
from ._server import Diagnostics, Server

# go-plugin's core protocol version (the first field of the handshake line).
CORE_PROTOCOL_VERSION = 1

_NOT_A_PROGRAM = ("This binary is a plugin. These are not meant to be executed directly.\n"
                  "Please execute the program that consumes these plugins, which will\n"
                  "load any plugins automatically\n")


# How long a cached certificate is used: it is made valid for 7 days.
_CERT_DAYS = 7
_CERT_REUSE_SECONDS = 6 * 24 * 3600


def make_certificate():
    """A self-signed ECDSA P-256 certificate for "localhost" (client and
    server auth), as (cert PEM, key PEM). Python's standard library cannot
    make one. The openssl command line is tried first: about 15 ms, against
    about 50 ms to import the cryptography module and make one with it (not
    every python3 has that module: python3-cryptography on Debian), which is
    the fallback."""
    if _which("openssl"):
        return _cert_openssl()
    try:
        return _cert_cryptography()
    except ImportError:
        raise RuntimeError("no certificate maker: install the openssl command line or the cryptography module") from None


def _cache_dir():
    """The user's cache directory for abkit, as os.UserCacheDir in Go."""
    if os.name == "nt":
        base = os.environ.get("LOCALAPPDATA", "")
    elif sys.platform == "darwin":
        base = os.path.expanduser("~/Library/Caches")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.path.join(base, "abkit") if base else ""


def plugin_certificate():
    """The plugin's certificate and key, from the per-user cache when one was
    made in the last 6 days, else made now and cached (a start then spawns no
    openssl: docs/perf.md). The file is the user's own (0600, in a 0700
    directory), like the process that holds the key; the host pins the
    certificate the handshake line names, so reuse across plugins only saves
    time. ABKIT_PLUGIN_CERT_CACHE=0 makes a fresh one every start."""
    d = _cache_dir() if os.environ.get("ABKIT_PLUGIN_CERT_CACHE", "1") not in ("0", "false") else ""
    path = os.path.join(d, "plugin-tls-%s.pem" % (os.getuid() if hasattr(os, "getuid") else "user")) if d else ""
    if path:
        try:
            st = os.stat(path)
            if time.time() - st.st_mtime < _CERT_REUSE_SECONDS and (os.name == "nt" or st.st_mode & 0o077 == 0):
                with open(path, "rb") as f:
                    b = f.read()
                i = b.index(b"-----BEGIN CERTIFICATE-----")
                return b[i:], b[:i]
        except (OSError, ValueError):
            pass
    cert, key = make_certificate()
    if path:
        try:
            os.makedirs(d, mode=0o700, exist_ok=True)
            tmp = "%s.%d.tmp" % (path, os.getpid())
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(key + cert)
            os.replace(tmp, path)
        except OSError:
            pass  # the cache only saves time
    return cert, key


def _which(name):
    """shutil.which, without importing shutil (it imports bz2 and lzma)."""
    exts = os.environ.get("PATHEXT", ".EXE").split(os.pathsep) if os.name == "nt" else [""]
    for d in os.environ.get("PATH", os.defpath).split(os.pathsep):
        for e in exts:
            p = os.path.join(d, name + e)
            if os.path.isfile(p) and os.access(p, os.X_OK):
                return p
    return None


def _mkdtemp(prefix, parent=None):
    """tempfile.mkdtemp, without importing tempfile (and shutil, random)."""
    parent = parent or os.environ.get("TMPDIR") or os.environ.get("TEMP") or os.environ.get("TMP") or "/tmp"
    for _ in range(100):
        p = os.path.join(parent, "%s%s" % (prefix, os.urandom(6).hex()))
        try:
            os.mkdir(p, 0o700)
            return p
        except FileExistsError:
            continue
    raise OSError("cannot make a directory under %s" % parent)


def _rmtree(d):
    for root, dirs, files in os.walk(d, topdown=False):
        for n in files:
            try:
                os.unlink(os.path.join(root, n))
            except OSError:
                pass
        for n in dirs:
            try:
                os.rmdir(os.path.join(root, n))
            except OSError:
                pass
    try:
        os.rmdir(d)
    except OSError:
        pass


def _cert_cryptography():
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost"),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, "abkit")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(seconds=30))
            .not_valid_after(now + datetime.timedelta(days=_CERT_DAYS))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(True, False, False, False, False, True, False, False, False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH, ExtendedKeyUsageOID.SERVER_AUTH]),
                           critical=False)
            .sign(key, hashes.SHA256()))
    return (cert.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()))


def _cert_openssl():
    import subprocess

    openssl = _which("openssl")
    if not openssl:
        raise RuntimeError("no certificate maker: install the openssl command line or the cryptography module")
    d = _mkdtemp("abkit-cert-")
    try:
        cert, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
        subprocess.run([openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-keyout", key, "-out", cert, "-days", str(_CERT_DAYS), "-subj", "/O=abkit/CN=localhost",
                        "-addext", "subjectAltName=DNS:localhost",
                        "-addext", "basicConstraints=critical,CA:TRUE",
                        "-addext", "keyUsage=critical,digitalSignature,keyCertSign",
                        "-addext", "extendedKeyUsage=clientAuth,serverAuth"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        with open(cert, "rb") as c, open(key, "rb") as k:
            return c.read(), k.read()
    finally:
        _rmtree(d)


def _der(pem):
    """The DER bytes of a PEM certificate (without importing ssl, which costs
    a noticeable part of the start)."""
    body = pem.split(b"-----BEGIN CERTIFICATE-----", 1)[1].split(b"-----END CERTIFICATE-----", 1)[0]
    return base64.b64decode(b"".join(body.split()))


def _raw(fn):
    return grpc.unary_unary_rpc_method_handler(fn, request_deserializer=None, response_serializer=None)


def _go_plugin_services(server, stop):
    """GRPCController.Shutdown (without it the host waits 500 ms, then kills)
    and grpc.health.v1 Check (go-plugin's Ping). Messages are written by hand:
    Empty is no bytes, HealthCheckResponse{status: SERVING} is 08 01."""
    def shutdown(_req, _ctx):
        threading.Thread(target=stop, daemon=True).start()
        return b""

    server.add_generic_rpc_handlers((
        grpc.method_handlers_generic_handler("plugin.GRPCController", {"Shutdown": _raw(shutdown)}),
        grpc.method_handlers_generic_handler("grpc.health.v1.Health", {"Check": _raw(lambda _r, _c: b"\x08\x01")}),
    ))


def _negotiate():
    """The app protocol version to serve, from the host's PLUGIN_PROTOCOL_VERSIONS."""
    offered = [v for v in os.environ.get("PLUGIN_PROTOCOL_VERSIONS", str(PROTOCOL_VERSION)).split(",") if v]
    if str(PROTOCOL_VERSION) not in offered:
        sys.stderr.write("abkit plugin: the host offers protocol versions %s; this SDK serves %d\n"
                         % (",".join(offered), PROTOCOL_VERSION))
        sys.exit(1)
    return PROTOCOL_VERSION


def run(plugin, debug=False):
    if not debug and os.environ.get(MAGIC_COOKIE_KEY) != MAGIC_COOKIE_VALUE:
        sys.stderr.write(_NOT_A_PROGRAM)
        sys.exit(1)
    version = PROTOCOL_VERSION if debug else _negotiate()
    try:
        impl = Server(plugin)
    except Exception as e:
        sys.stderr.write("abkit plugin %r cannot be served: %s\n" % (plugin.name, e))
        sys.exit(2)

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=32))
    pbg.add_PluginServicer_to_server(impl, server)
    pbg.add_DiagnosticsServicer_to_server(Diagnostics(), server)
    done = threading.Event()

    def stop():
        server.stop(0.2).wait()
        done.set()

    _go_plugin_services(server, stop)

    sock_dir = _mkdtemp("plugin", os.environ.get("PLUGIN_UNIX_SOCKET_DIR"))
    network, addr = "unix", os.path.join(sock_dir, "plugin.sock")
    listen = "unix:" + addr
    if os.name == "nt":  # no Unix sockets for gRPC there: TCP on loopback, as go-plugin does
        network, listen = "tcp", "127.0.0.1:0"
    cert_field = ""
    host_cert = os.environ.get("PLUGIN_CLIENT_CERT", "")
    if host_cert and not debug:
        cert, key = plugin_certificate()
        # Trust only the host's certificate, and require it.
        creds = grpc.ssl_server_credentials([(key, cert)], root_certificates=host_cert.encode(),
                                            require_client_auth=True)
        port = server.add_secure_port(listen, creds)
        # go-plugin decodes the field with RawStdEncoding: no padding.
        cert_field = base64.b64encode(_der(cert)).decode().rstrip("=")
    else:
        port = server.add_insecure_port(listen)
    if network == "tcp":
        addr = "127.0.0.1:%d" % port
    server.start()

    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=stop, daemon=True).start())
    if debug:
        signal.signal(signal.SIGINT, lambda *_: threading.Thread(target=stop, daemon=True).start())
        sys.stderr.write("abkit plugin %r: debug mode (ABKIT_PLUGIN_DEBUG): the reattach config is on stdout; "
                         "stop with Ctrl-C\n" % plugin.name)
        sys.stdout.write(json.dumps({"Protocol": "grpc", "ProtocolVersion": version,
                                     "Addr": {"Network": network, "String": addr},
                                     "Pid": os.getpid(), "Test": True}) + "\n")
    else:
        # go-plugin's SIGINT reaches the whole process group; the host stops us.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        sys.stdout.write("%d|%d|%s|%s|grpc|%s\n" % (CORE_PROTOCOL_VERSION, version, network, addr, cert_field))
    sys.stdout.flush()
    try:
        done.wait()
    finally:
        _rmtree(sock_dir)
    sys.stdout.flush()
    os._exit(0)
