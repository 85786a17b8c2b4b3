"""dispatchtorch.hub against torch.hub, all local: the cache directory, hubconf.py entrypoints
(results, errors, list, help), downloads from an http.server on 127.0.0.1 (atomic, hash
checked, cached), and GitHub archives served by that server in place of codeload."""
from __future__ import annotations

import hashlib
import http.server
import io
import os
import sys
import threading
import zipfile

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.hub  # noqa: E402

import dispatchtorch as dt  # noqa: E402
import dispatchtorch.hub  # noqa: E402,F401

HUBCONF = '''
dependencies = {deps!r}
from _hub_test_helper import scale


def entry(a, b=2):
    """Entry doc: a * scale + b."""
    return {{"value": a * scale + b}}


def _private():
    return 0


class Model:
    """A class entrypoint."""

    def __init__(self, width=3):
        self.width = width


not_callable = 5
'''


def write_repo(root, deps=("os",)):
    root.mkdir(parents=True, exist_ok=True)
    (root / "hubconf.py").write_text(HUBCONF.format(deps=list(deps)))
    (root / "_hub_test_helper.py").write_text("scale = 10\n")
    return str(root)


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    """Each library its own TORCH_HOME under tmp_path, set_dir's override cleared."""
    monkeypatch.setattr(torch.hub, "_hub_dir", None)
    monkeypatch.setattr(dt.hub._download, "_hub_dir", None)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("TORCH_HUB", raising=False)
    monkeypatch.delenv("TORCH_MODEL_ZOO", raising=False)
    yield
    sys.modules.pop("_hub_test_helper", None)


def both(monkeypatch, tmp_path, fn):
    """fn(lib) under lib's own TORCH_HOME, for torch then dispatchtorch."""
    out = []
    for name, lib in (("torch", torch), ("dt", dt)):
        monkeypatch.setenv("TORCH_HOME", str(tmp_path / name))
        sys.modules.pop("_hub_test_helper", None)
        out.append(fn(lib))
    return out


# ---- the cache directory -------------------------------------------------------------------

@pytest.mark.parametrize("env", [{"TORCH_HOME": "th"}, {"XDG_CACHE_HOME": "xdg"}, {},
                                 {"TORCH_HOME": "~/th", "XDG_CACHE_HOME": "xdg"}])
def test_get_dir_same_path(tmp_path, monkeypatch, env):
    monkeypatch.delenv("TORCH_HOME")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    for k, v in env.items():
        monkeypatch.setenv(k, v if v.startswith("~") else str(tmp_path / v))
    assert dt.hub.get_dir() == torch.hub.get_dir()
    assert dt.hub.get_dir().startswith(str(tmp_path))


def test_set_dir_overrides_env_and_expands_user(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    dt.hub.set_dir("~/mine")
    torch.hub.set_dir("~/mine")
    assert dt.hub.get_dir() == torch.hub.get_dir() == str(tmp_path / "mine")


def test_torch_hub_env_warns_as_pytorch(monkeypatch):
    monkeypatch.setenv("TORCH_HUB", "x")
    with pytest.warns(UserWarning, match="TORCH_HUB is deprecated"):
        dt.hub.get_dir()


# ---- hubconf.py from a local directory -----------------------------------------------------

def test_local_entrypoint_results(tmp_path):
    repo = write_repo(tmp_path / "repo")
    r = [lib.hub.load(repo, "entry", 4, b=1, source="local") for lib in (torch, dt)]
    assert r[0] == r[1] == {"value": 41}
    m = [lib.hub.load(repo, "Model", source="LOCAL", width=7).width for lib in (torch, dt)]
    assert m == [7, 7]
    assert repo not in sys.path


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


@pytest.mark.parametrize("model, kw", [("missing", {}), ("_absent", {}), ("not_callable", {}),
                                       (3, {}), ("entry", {"source": "gitlab"})])
def test_local_errors_as_pytorch(tmp_path, model, kw):
    repo = write_repo(tmp_path / "repo")
    kw = {"source": "local", **kw}
    errs = [_error(lambda lib=lib: lib.hub.load(repo, model, **kw)) for lib in (torch, dt)]
    assert errs[0] == errs[1]
    assert errs[1][0] in (RuntimeError, ValueError)


def test_missing_dependencies_as_pytorch(tmp_path):
    repo = write_repo(tmp_path / "repo", deps=("os", "no_such_pkg_hub_a", "no_such_pkg_hub_b"))
    errs = [_error(lambda lib=lib: lib.hub.load(repo, "entry", 1, source="local"))
            for lib in (torch, dt)]
    assert errs[0] == errs[1] == (RuntimeError,
                                  "Missing dependencies: no_such_pkg_hub_a, no_such_pkg_hub_b")


# ---- a local HTTP server -------------------------------------------------------------------

class Server:
    def __init__(self):
        self.files, self.hits = {}, []
        files, hits = self.files, self.hits

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):                  # noqa: N802  (http.server's name)
                hits.append(self.path)
                body = files.get(self.path)
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


@pytest.fixture
def server():
    s = Server()
    yield s
    s.close()


VALUES = {"w": np.arange(12, dtype=np.float32).reshape(3, 4), "b": np.array([1, -2], np.int64)}


def saved(lib):
    buf = io.BytesIO()
    sd = {k: lib.tensor(v) for k, v in VALUES.items()}
    if lib is dt:
        path = os.path.join(os.environ["TORCH_HOME"], "_tmp.pt")   # dt.save writes paths
        os.makedirs(os.path.dirname(path), exist_ok=True)
        dt.save(sd, path)
        with open(path, "rb") as f:
            data = f.read()
        os.remove(path)
        return data
    torch.save(sd, buf)
    return buf.getvalue()


def assert_values(sd):
    assert sorted(sd) == sorted(VALUES)
    for k, v in VALUES.items():
        np.testing.assert_array_equal(sd[k].numpy(), v)
        assert str(sd[k].dtype).split(".")[-1] == str(v.dtype)


def test_download_url_to_file(tmp_path, server):
    server.files["/blob.bin"] = data = os.urandom(300_000)      # over one read chunk
    digest = hashlib.sha256(data).hexdigest()
    for lib in (torch, dt):
        dst = tmp_path / lib.__name__ / "out.bin"
        dst.parent.mkdir()
        lib.hub.download_url_to_file(server.url + "/blob.bin", str(dst), digest[:12],
                                     progress=False)
        assert dst.read_bytes() == data


def test_download_wrong_hash_as_pytorch_and_no_file_left(tmp_path, server):
    server.files["/blob.bin"] = b"hub bytes"
    errs = []
    for lib in (torch, dt):
        d = tmp_path / lib.__name__
        d.mkdir()
        errs.append(_error(lambda: lib.hub.download_url_to_file(
            server.url + "/blob.bin", str(d / "out.bin"), "0123abcd", progress=True)))
        assert os.listdir(d) == []            # neither dst nor a .partial file stays
    digest = hashlib.sha256(b"hub bytes").hexdigest()
    assert errs[0] == errs[1] == (RuntimeError,
                                  f'invalid hash value (expected "0123abcd", got "{digest}")')


def test_download_http_error_passes_through(tmp_path, server):
    from urllib.error import HTTPError
    with pytest.raises(HTTPError):
        dt.hub.download_url_to_file(server.url + "/absent", str(tmp_path / "x"), progress=False)
    assert os.listdir(tmp_path) == ["home"] or os.listdir(tmp_path) == []


def test_load_state_dict_from_url_values_and_cache(tmp_path, monkeypatch, server, capsys):
    def run(lib):
        server.files[f"/{lib.__name__}/ckpt.pth"] = saved(lib)
        url = f"{server.url}/{lib.__name__}/ckpt.pth"
        sd = lib.hub.load_state_dict_from_url(url, progress=False, map_location="cpu",
                                              weights_only=True)
        again = lib.hub.load_state_dict_from_url(url, progress=False)
        assert os.path.exists(os.path.join(lib.hub.get_dir(), "checkpoints", "ckpt.pth"))
        return sd, again

    for sd, again in both(monkeypatch, tmp_path, run):
        assert_values(sd)
        assert_values(again)
    assert server.hits == ["/torch/ckpt.pth", "/dispatchtorch/ckpt.pth"]    # one request each
    assert capsys.readouterr().out.count('Downloading: "') == 2


def test_check_hash_file_name_and_model_dir(tmp_path, monkeypatch, server):
    def run(lib):
        data = saved(lib)
        good = f"ck-{hashlib.sha256(data).hexdigest()[:10]}.pt"
        server.files[f"/{lib.__name__}/{good}"] = data
        server.files[f"/{lib.__name__}/ck-deadbeef00.pt"] = data
        model_dir = tmp_path / lib.__name__ / "models"
        sd = lib.hub.load_state_dict_from_url(f"{server.url}/{lib.__name__}/{good}",
                                              model_dir=str(model_dir), check_hash=True,
                                              progress=False)
        assert_values(sd)
        bad = _error(lambda: lib.hub.load_state_dict_from_url(
            f"{server.url}/{lib.__name__}/ck-deadbeef00.pt", model_dir=str(model_dir),
            check_hash=True, progress=False))
        renamed = lib.hub.load_state_dict_from_url(       # file_name picks the cache name
            f"{server.url}/{lib.__name__}/ck-deadbeef00.pt", model_dir=str(model_dir),
            file_name="renamed.pt", progress=False)
        assert_values(renamed)
        return bad[0], bad[1].split(", got")[0], sorted(os.listdir(model_dir)), good

    (t_cls, t_msg, t_ls, t_good), (d_cls, d_msg, d_ls, d_good) = both(monkeypatch, tmp_path, run)
    assert t_cls is d_cls is RuntimeError
    assert t_msg == d_msg == 'invalid hash value (expected "deadbeef00"'
    assert t_ls == sorted([t_good, "renamed.pt"]) and d_ls == sorted([d_good, "renamed.pt"])


def test_legacy_zip_checkpoint(tmp_path, monkeypatch, server):
    def run(lib):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            zf.writestr("inner.pt", saved(lib))
        server.files[f"/{lib.__name__}/old.zip"] = buf.getvalue()
        with pytest.warns(FutureWarning, match="old format < 1.6"):
            return lib.hub.load_state_dict_from_url(f"{server.url}/{lib.__name__}/old.zip",
                                                    progress=False)

    for sd in both(monkeypatch, tmp_path, run):
        assert_values(sd)


def test_a_checkpoint_written_by_pytorch_loads(server):
    """Weights published for PyTorch (torch.save's zip format) load through the hub, by
    the restricted reader of docs/serialization.md."""
    server.files["/pt.pth"] = saved(torch)
    assert_values(dt.hub.load_state_dict_from_url(server.url + "/pt.pth", progress=False))


# ---- GitHub sources through the local server -----------------------------------------------

def repo_zip(top="repo-main", extra=()):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(f"{top}/", b"")
        zf.writestr(f"{top}/hubconf.py", HUBCONF.format(deps=["os"]))
        zf.writestr(f"{top}/_hub_test_helper.py", "scale = 10\n")
        for name, body in extra:
            zf.writestr(name, body)
    return buf.getvalue()


@pytest.fixture
def github(server, monkeypatch):
    """Both libraries' archive links pointed at the local server."""
    monkeypatch.setattr(torch.hub, "_git_archive_link",
                        lambda o, n, r: f"{server.url}/{o}/{n}/zip/{r}")
    monkeypatch.setattr(dt.hub._github, "_ARCHIVE_BASE", server.url)
    server.files["/owner/repo/zip/main"] = repo_zip()
    return server


def test_github_load_caches_and_force_reload(tmp_path, monkeypatch, github, capsys):
    def run(lib):
        first = lib.hub.load("owner/repo:main", "entry", 2, trust_repo=True, skip_validation=True)
        again = lib.hub.load("owner/repo:main", "entry", 3, b=0, trust_repo=True,
                             skip_validation=True)
        assert "Using cache found in" in capsys.readouterr().err
        lib.hub.load("owner/repo:main", "entry", 1, trust_repo=True, skip_validation=True,
                     force_reload=True)
        hub_dir = lib.hub.get_dir()
        with open(os.path.join(hub_dir, "trusted_list")) as f:
            trusted = f.read()
        return first, again, sorted(os.listdir(hub_dir)), trusted

    assert both(monkeypatch, tmp_path, run) == [
        ({"value": 22}, {"value": 30}, ["owner_repo_main", "trusted_list"], "owner_repo\n")] * 2
    assert github.hits == ["/owner/repo/zip/main"] * 4          # two downloads per library


def test_github_list_and_help_as_pytorch(tmp_path, monkeypatch, github):
    def run(lib):
        kw = dict(trust_repo=True, skip_validation=True)
        return (lib.hub.list("owner/repo:main", **kw),
                lib.hub.help("owner/repo:main", "entry", **kw),
                lib.hub.help("owner/repo:main", "Model", **kw),
                _error(lambda: lib.hub.help("owner/repo:main", "nothing", **kw)))

    t, d = both(monkeypatch, tmp_path, run)
    assert t == d
    assert d[0] == ["Model", "entry"] and d[1] == "Entry doc: a * scale + b."


def test_github_branch_with_slash(tmp_path, monkeypatch, github):
    github.files["/owner/repo/zip/feature/x"] = repo_zip("repo-feature-x")

    def run(lib):
        lib.hub.load("owner/repo:feature/x", "entry", 0, trust_repo=True, skip_validation=True)
        return sorted(os.listdir(lib.hub.get_dir()))

    assert both(monkeypatch, tmp_path, run) == [["owner_repo_feature_x", "trusted_list"]] * 2


@pytest.mark.parametrize("answer, expected", [
    ("y", None), ("", (Exception, "Untrusted repository.")),
    ("No", (Exception, "Untrusted repository.")),
    ("maybe", (ValueError, "Unrecognized response maybe."))])
def test_trust_prompt_as_pytorch(tmp_path, monkeypatch, github, answer, expected):
    prompts = []
    monkeypatch.setattr("builtins.input", lambda msg: prompts.append(msg) or answer)

    def run(lib):
        def call():
            return lib.hub.load("owner/repo:main", "entry", 1, skip_validation=True)
        got = call() if expected is None else _error(call)
        with open(os.path.join(lib.hub.get_dir(), "trusted_list")) as f:
            return got, f.read()

    t, d = both(monkeypatch, tmp_path, run)
    assert t == d
    assert d == (({"value": 12}, "owner_repo\n") if expected is None else (expected, ""))
    assert len(prompts) == 2 and prompts[0] == prompts[1]
    assert "owner_repo does not belong to the list of trusted repositories" in prompts[1]


def test_trusted_list_and_owners_skip_the_prompt(tmp_path, monkeypatch, github):
    monkeypatch.setattr("builtins.input", lambda msg: pytest.fail("prompted"))
    github.files["/pytorch/repo/zip/main"] = repo_zip()
    hub_dir = tmp_path / "dt" / "hub"
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "dt"))
    hub_dir.mkdir(parents=True)
    (hub_dir / "trusted_list").write_text("owner_repo\n")
    assert dt.hub.load("owner/repo:main", "entry", 1, skip_validation=True) == {"value": 12}
    assert dt.hub.load("pytorch/repo:main", "entry", 1, skip_validation=True) == {"value": 12}
    assert (hub_dir / "trusted_list").read_text() == "owner_repo\n"
    # trust_repo=False prompts even for a trusted repo
    monkeypatch.setattr("builtins.input", lambda msg: "yes")
    assert dt.hub.load("owner/repo:main", "entry", 2, trust_repo=False,
                       skip_validation=True) == {"value": 22}


@pytest.mark.parametrize("evil", ["/abs.py", "repo-main/a/../../../up.py", "../up.py"])
def test_github_zip_slip_refused(tmp_path, monkeypatch, github, evil):
    github.files["/owner/repo/zip/main"] = repo_zip(extra=[(evil, "x = 1\n")])

    def run(lib):
        err = _error(lambda: lib.hub.load("owner/repo:main", "entry", 1, trust_repo=True,
                                          skip_validation=True))
        return err, sorted(os.listdir(lib.hub.get_dir()))

    (t_err, _), (d_err, d_ls) = both(monkeypatch, tmp_path, run)
    assert t_err == d_err and d_err[0] is ValueError
    assert d_ls == ["trusted_list"]                  # nothing extracted, the zip removed
    assert not any(p.name in ("escaped.py", "up.py", "abs.py") for p in tmp_path.rglob("*"))


def test_dotdot_inside_the_hub_dir_refused_too(tmp_path, github):
    """Stricter than PyTorch, which extracts `repo-main/../trusted_list` (writing it as
    repo-main/trusted_list)."""
    github.files["/owner/repo/zip/main"] = repo_zip(extra=[("repo-main/../trusted_list", "x\n")])
    with pytest.raises(ValueError, match="directory traversal: repo-main/../trusted_list"):
        dt.hub.load("owner/repo:main", "entry", 1, trust_repo=True, skip_validation=True)
    assert (tmp_path / "home" / "hub" / "trusted_list").read_text() == "owner_repo\n"
    assert os.listdir(tmp_path / "home" / "hub") == ["trusted_list"]


def test_bad_repo_spec_raises_value_error(tmp_path):
    for spec in ("no-slash:main", "a/b/c:main", "a/b:c:d"):
        with pytest.raises(ValueError):
            dt.hub.load(spec, "entry", trust_repo=True, skip_validation=True)


def test_torch_hub_attribute_access():
    assert dt.hub is sys.modules["dispatchtorch.hub"]
    assert set(dt.hub.__all__) == set(torch.hub.__all__)
    assert dt.hub.HASH_REGEX.search("resnet18-bfd8deac.pth").group(1) == "bfd8deac"


def _offline(lib, monkeypatch):
    from urllib.error import URLError

    def refuse(*args, **kwargs):
        raise URLError("offline")
    monkeypatch.setattr(torch.hub if lib is torch else dt.hub._github, "urlopen", refuse)


@pytest.mark.parametrize("cached", [None, "master", "main"])
def test_default_ref_offline_as_pytorch(tmp_path, monkeypatch, cached):
    def run(lib):
        _offline(lib, monkeypatch)
        if cached:
            home = tmp_path / ("torch" if lib is torch else "dt")
            write_repo(home / "hub" / f"owner_repo_{cached}")
        return _error(lambda: lib.hub.load("owner/repo", "absent_entry", trust_repo=True))

    t, d = both(monkeypatch, tmp_path, run)
    assert (t[0], t[1].replace("/torch/hub", "/dt/hub")) == d
    want = ("Cannot find callable absent_entry in hubconf" if cached else
            "It looks like there is no internet connection and the repo could not be found "
            f"in the cache ({tmp_path / 'dt' / 'hub'})")
    assert d == (RuntimeError, want)


def test_ambiguous_ref_warns_and_takes_the_branch(tmp_path, monkeypatch, github):
    del github.files["/owner/repo/zip/main"]                  # 404 -> a plain HTTPError first
    github.files["/owner/repo/zip/refs/heads/main"] = repo_zip()
    from urllib.error import HTTPError
    with pytest.raises(HTTPError):
        dt.hub.load("owner/repo:main", "entry", 1, trust_repo=True, skip_validation=True)

    real = dt.hub._github.download_url_to_file

    def three_hundred(url, dst, hash_prefix=None, progress=True):
        if url.endswith("/zip/main"):
            raise HTTPError(url, 300, "Multiple Choices", {}, None)
        return real(url, dst, hash_prefix, progress)
    monkeypatch.setattr(dt.hub._github, "download_url_to_file", three_hundred)
    with pytest.warns(UserWarning, match="The ref main is ambiguous"):
        assert dt.hub.load("owner/repo:main", "entry", 1, trust_repo=True,
                           skip_validation=True) == {"value": 12}


def test_fork_validation_as_pytorch(tmp_path, monkeypatch, github):
    """skip_validation=False lists the repo's branches and tags from the GitHub API (served
    here by the local server): a ref on neither is a fork's, a ValueError as in PyTorch."""
    import json
    api = "/repos/owner/repo"
    github.files[f"{api}/branches?per_page=100&page=1"] = json.dumps(
        [{"name": "main", "commit": {"sha": "abc123"}}]).encode()
    for kind, page in (("branches", 2), ("tags", 1)):
        github.files[f"{api}/{kind}?per_page=100&page={page}"] = b"[]"
    github.files["/owner/repo/zip/abc1"] = repo_zip("repo-abc1")
    from urllib.request import Request, urlopen

    def local(req, *args, **kwargs):
        url = req.full_url if isinstance(req, Request) else req
        return urlopen(url.replace("https://api.github.com", github.url), *args, **kwargs)

    def run(lib):
        monkeypatch.setattr(torch.hub if lib is torch else dt.hub._github, "urlopen", local)
        ok = [lib.hub.load(f"owner/repo:{ref}", "entry", 1, trust_repo=True)
              for ref in ("main", "abc1")]
        return ok, _error(lambda: lib.hub.load("owner/repo:forked", "entry", trust_repo=True))

    t, d = both(monkeypatch, tmp_path, run)
    assert t == d
    assert d[0] == [{"value": 12}] * 2 and d[1][0] is ValueError
    assert d[1][1].startswith("Cannot find forked in https://github.com/owner/repo. ")
