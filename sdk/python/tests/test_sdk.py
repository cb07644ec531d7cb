"""The SDK's own tests: what a host relies on besides the conformance suite."""
import unittest

import abkit
from abkit import _server
from abkit import gateway as gw
from abkit.v1 import abkit_pb2 as pb


class Writer:
    def capabilities(self):
        return gw.Capabilities(writes_request_body=True)

    def on_request(self, ctx, ex):
        ex.state["n"] = ex.state.get("n", 0) + 1
        ex.set_extension("seen", {"calls": ex.state["n"]})
        ex.set_request_body(b"new")
        ex.set_response_body(b"no")
        return gw.reject(418, "teapot") if ctx.err() else gw.proceed()

    def on_response(self, ctx, ex):
        raise RuntimeError("boom")


class Ctx:
    def time_remaining(self):
        return None

    def abort(self, code, msg):
        raise RuntimeError(msg)


def server():
    return _server.Server(abkit.Plugin("w", "Writes request bodies", pipeline=gw.Factory(lambda cfg: Writer())))


class SDKTest(unittest.TestCase):
    def test_describe_probes_two_instances(self):
        d = server().desc
        self.assertEqual(list(d.families), ["P"])
        self.assertEqual(len(d.pipeline.observed), 2)
        self.assertTrue(d.pipeline.capabilities.writes_request_body)
        self.assertEqual(d.pipeline.capabilities.description, "Writes request bodies")

    def test_write_rules_state_and_changed_only_extensions(self):
        s = server()
        inst = s.NewInstance(pb.NewInstanceRequest(direction="inbound"), Ctx()).instance
        req = pb.HookRequest(instance=inst, exchange=7, request=pb.HTTPRequest(method="POST", has_body=True, body=b"x"))
        r = s.OnRequest(req, Ctx())
        self.assertEqual([(w.response, w.applied, w.body) for w in r.writes], [(False, True, b"new"), (True, False, b"")])
        self.assertEqual([e.key for e in r.extensions], ["seen"])
        r = s.OnRequest(pb.HookRequest(instance=inst, exchange=7, ctx_err="canceled"), Ctx())
        self.assertEqual(r.action.kind, "reject")  # ctx.err() saw the host's cancel
        self.assertEqual(len(r.extensions), 1)  # calls went 1 -> 2: changed
        r = s.OnResponse(pb.HookRequest(instance=inst, exchange=7, final=True), Ctx())
        self.assertTrue(r.panicked)
        self.assertIn("boom", r.error)
        self.assertIn("Traceback", r.error)
        self.assertEqual(s.insts[inst].exs, {})  # dropped after the final call

    def test_header_canonical(self):
        h = gw.Header()
        h.set("content-type", "a")
        self.assertEqual(h.get_first("CONTENT-TYPE"), "a")
        self.assertIn("Content-Type", h)

    def test_probe_configs(self):
        f = [gw.Field("n", "integer"), gw.Field("d", "string", default="x")]
        self.assertEqual(gw.probe_configs(f), [None, {"d": "x"}, {"n": 1, "d": "x"}])


if __name__ == "__main__":
    unittest.main()


class CertificateTest(unittest.TestCase):
    def test_cached_per_user_private_and_can_be_turned_off(self):
        import os
        import stat
        import tempfile
        from unittest import mock

        from abkit import _serve

        with tempfile.TemporaryDirectory() as d, mock.patch.dict(os.environ, {"XDG_CACHE_HOME": d}):
            os.environ.pop("ABKIT_PLUGIN_CERT_CACHE", None)
            cert, key = _serve.plugin_certificate()
            self.assertTrue(cert.startswith(b"-----BEGIN CERTIFICATE-----"))
            self.assertIn(b"PRIVATE KEY", key)
            self.assertEqual(_serve.plugin_certificate(), (cert, key))
            (name,) = [n for n in os.listdir(os.path.join(d, "abkit")) if n.startswith("plugin-tls-")]
            if os.name != "nt":
                self.assertEqual(stat.S_IMODE(os.stat(os.path.join(d, "abkit", name)).st_mode) & 0o077, 0)
            os.environ["ABKIT_PLUGIN_CERT_CACHE"] = "0"
            self.assertNotEqual(_serve.plugin_certificate()[0], cert)

    def test_no_tempfile_or_shutil_at_start(self):
        import subprocess
        import sys

        code = "import abkit._serve, sys; print(' '.join(m for m in ('shutil', 'tempfile', 'lzma') if m in sys.modules))"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
        self.assertEqual(out, "", "serving imports modules it does not need: " + out)
