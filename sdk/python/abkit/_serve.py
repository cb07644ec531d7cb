"""go-plugin's side of the process boundary, for a Python plugin: the
cookie check, the handshake line, mutual TLS and the services go-plugin's
host calls besides abkit's own (GRPCController, health)."""

import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
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


def make_certificate():
    """A self-signed ECDSA P-256 certificate for "localhost" (client and
    server auth), as (cert PEM, key PEM). Python's standard library cannot
    make one. The openssl command line is tried first: about 15 ms, against
    about 50 ms to import the cryptography module and make one with it (not
    every python3 has that module: python3-cryptography on Debian), which is
    the fallback."""
    if shutil.which("openssl"):
        return _cert_openssl()
    try:
        return _cert_cryptography()
    except ImportError:
        raise RuntimeError("no certificate maker: install the openssl command line or the cryptography module") from None


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
            .not_valid_after(now + datetime.timedelta(days=1))
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
    openssl = shutil.which("openssl")
    if not openssl:
        raise RuntimeError("no certificate maker: install the openssl command line or the cryptography module")
    d = tempfile.mkdtemp(prefix="abkit-cert-")
    try:
        cert, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
        subprocess.run([openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/O=abkit/CN=localhost",
                        "-addext", "subjectAltName=DNS:localhost",
                        "-addext", "basicConstraints=critical,CA:TRUE",
                        "-addext", "keyUsage=critical,digitalSignature,keyCertSign",
                        "-addext", "extendedKeyUsage=clientAuth,serverAuth"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        with open(cert, "rb") as c, open(key, "rb") as k:
            return c.read(), k.read()
    finally:
        shutil.rmtree(d, ignore_errors=True)


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

    sock_dir = tempfile.mkdtemp(prefix="plugin", dir=os.environ.get("PLUGIN_UNIX_SOCKET_DIR") or None)
    network, addr = "unix", os.path.join(sock_dir, "plugin.sock")
    listen = "unix:" + addr
    if os.name == "nt":  # no Unix sockets for gRPC there: TCP on loopback, as go-plugin does
        network, listen = "tcp", "127.0.0.1:0"
    cert_field = ""
    host_cert = os.environ.get("PLUGIN_CLIENT_CERT", "")
    if host_cert and not debug:
        cert, key = make_certificate()
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
        shutil.rmtree(sock_dir, ignore_errors=True)
    sys.stdout.flush()
    os._exit(0)
