"""GitHub sources for torch.hub: `owner/repo[:ref]`, the trusted list, and the repo's
archive downloaded once into the hub cache (everything through urllib, no git)."""
from __future__ import annotations

import json
import os
import shutil
import sys
import warnings
import zipfile
from pathlib import Path
from urllib.error import HTTPError, URLError
from urllib.request import Request, urlopen

from ._download import download_url_to_file, get_dir
from ._zip import safe_extract_zip

# the archive of a branch or tag (tests point this at a local server)
_ARCHIVE_BASE = "https://codeload.github.com"
_TRUSTED_REPO_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")


def _git_archive_link(owner, name, ref):
    return f"{_ARCHIVE_BASE}/{owner}/{name}/zip/{ref}"


def _remove_if_exists(path):
    if os.path.isfile(path):
        os.remove(path)
    elif os.path.exists(path):
        shutil.rmtree(path)


def _default_ref(owner, name):
    """main if the repo has it, else master; offline, whichever is cached."""
    try:
        with urlopen(f"https://github.com/{owner}/{name}/tree/main/"):
            return "main"
    except HTTPError as e:
        if e.code == 404:
            return "master"
        raise
    except URLError as e:
        for ref in ("main", "master"):
            if os.path.exists(os.path.join(get_dir(), f"{owner}_{name}_{ref}")):
                return ref
        raise RuntimeError("It looks like there is no internet connection and the repo could "
                           f"not be found in the cache ({get_dir()})") from e


def parse_repo_info(github):
    """'owner/repo[:ref]' -> (owner, repo, ref); ValueError as PyTorch's unpacking raises."""
    repo_info, ref = github.split(":") if ":" in github else (github, None)
    owner, name = repo_info.split("/")
    return owner, name, ref if ref is not None else _default_ref(owner, name)


def _read_json(url, headers):
    with urlopen(Request(url, headers=headers)) as r:
        return json.loads(r.read().decode(r.headers.get_content_charset("utf-8")))


def _validate_not_a_forked_repo(owner, name, ref):
    """The ref must be a branch, tag or commit of this repo, not only of a fork (GitHub
    serves forks' commits under the parent's name)."""
    headers = {"Accept": "application/vnd.github.v3+json"}
    if os.environ.get("GITHUB_TOKEN") is not None:
        headers["Authorization"] = f"token {os.environ['GITHUB_TOKEN']}"
    for kind in ("branches", "tags"):
        page = 0
        while True:
            page += 1
            url = f"https://api.github.com/repos/{owner}/{name}/{kind}?per_page=100&page={page}"
            try:
                items = _read_json(url, headers)
            except HTTPError:          # retry without a token that lacks permissions
                headers.pop("Authorization", None)
                items = _read_json(url, headers)
            if not items:
                break
            if any(it["name"] == ref or it["commit"]["sha"].startswith(ref) for it in items):
                return
    raise ValueError(f"Cannot find {ref} in https://github.com/{owner}/{name}. If it's a commit "
                     "from a forked repo, please call hub.load() with forked repo directly.")


def check_repo_is_trusted(owner, name, owner_name_branch, trust_repo):
    """PyTorch's trust rules: the `trusted_list` file in the hub dir, any repo already
    downloaded, and PyTorch's own owners are trusted; otherwise ask on stdin."""
    hub_dir = get_dir()
    listing = os.path.join(hub_dir, "trusted_list")
    Path(listing).touch()
    with open(listing) as f:
        trusted = tuple(line.strip() for line in f)
    owner_name = f"{owner}_{name}"
    is_trusted = (owner_name in trusted or owner_name_branch in next(os.walk(hub_dir))[1]
                  or owner in _TRUSTED_REPO_OWNERS)
    if trust_repo is False or (trust_repo == "check" and not is_trusted):
        response = input(f"The repository {owner_name} does not belong to the list of trusted "
                         "repositories and as such cannot be downloaded. Do you trust this "
                         "repository and wish to add it to the trusted list of repositories (y/N)?")
        if response.lower() in ("y", "yes"):
            if is_trusted:
                print("The repository is already trusted.")
        elif response.lower() in ("n", "no", ""):
            raise Exception("Untrusted repository.")  # noqa: TRY002  (PyTorch's class)
        else:
            raise ValueError(f"Unrecognized response {response}.")
    if not is_trusted:
        with open(listing, "a") as f:
            f.write(owner_name + "\n")


def _download(owner, name, ref, cached_file):
    url = _git_archive_link(owner, name, ref)
    sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
    try:
        download_url_to_file(url, cached_file, progress=False)
    except HTTPError as err:
        if err.code != 300:
            raise
        warnings.warn(f"The ref {ref} is ambiguous. Perhaps it is both a tag and a branch in the "
                      "repo? Torchhub will now assume that it's a branch. You can disambiguate "
                      "tags and branches by explicitly passing refs/heads/branch_name or "
                      "refs/tags/tag_name as the ref. That might require using "
                      "skip_validation=True.", stacklevel=3)
        download_url_to_file(_git_archive_link(owner, name, f"refs/heads/{ref}"), cached_file,
                             progress=False)


def get_cache_or_reload(github, force_reload, trust_repo, verbose=True, skip_validation=False):
    """The local directory of `github` in the hub cache, downloaded (and unzipped) when absent."""
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    owner, name, ref = parse_repo_info(github)
    branch = ref.replace("/", "_")          # a branch may hold '/', a path may not
    owner_name_branch = f"{owner}_{name}_{branch}"
    repo_dir = os.path.join(hub_dir, owner_name_branch)
    check_repo_is_trusted(owner, name, owner_name_branch, trust_repo)
    if not force_reload and os.path.exists(repo_dir):
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    if not skip_validation:
        _validate_not_a_forked_repo(owner, name, ref)
    cached_file = os.path.join(hub_dir, branch + ".zip")
    _remove_if_exists(cached_file)
    try:
        _download(owner, name, ref, cached_file)
        with zipfile.ZipFile(cached_file) as zf:
            # the archive's top folder is GitHub's name for it (repo-ref, 'v' dropped from tags)
            extracted = os.path.join(hub_dir, zf.infolist()[0].filename)
            _remove_if_exists(extracted)
            safe_extract_zip(zf, hub_dir)
    finally:
        _remove_if_exists(cached_file)
    _remove_if_exists(repo_dir)
    shutil.move(extracted, repo_dir)
    return repo_dir
