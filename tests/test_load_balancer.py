"""The README's load-balancer recipe, run as written (issue 24 item 3): `deploy/nginx-costa.conf` in Debian's nginx
in front of two app replicas sharing one throwaway PostgreSQL database and one COSTA_HOME. A client of the balancer
uploads a real photo larger than nginx's default 1 MB body limit, edits it, and sees its version; each replica,
asked directly, shows the same history; every request of that client reached one replica (`ip_hash`, which
Gradio's event stream needs). Skips, saying why, without nginx or PostgreSQL's server binaries.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from bench.pg_server import free_port, fresh_database, missing_reason, pg_server
from bench.scale import edit_once, make_replica, start_all

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "deploy" / "nginx-costa.conf"
#: The recipe's ports, replaced by free ones here (the test listens on 127.0.0.1 only).
REPLICA_PORTS, BALANCER_LISTEN = ("127.0.0.1:7861", "127.0.0.1:7862"), "listen 8080;"


def nginx_binary() -> str | None:
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if Path(p).is_file()), None)


def balancer_config(folder: Path, replica_ports: tuple[int, int], port: int) -> Path:
    """nginx's main configuration in `folder`: its own pid, logs and temp folders, the recipe with this run's ports
    included in its http block, and an access log that names the upstream each request went to."""
    site = RECIPE.read_text(encoding="utf-8")
    assert BALANCER_LISTEN in site and all(p in site for p in REPLICA_PORTS), "the recipe's ports changed"
    site = site.replace(BALANCER_LISTEN, f"listen 127.0.0.1:{port};")
    for old, new in zip(REPLICA_PORTS, replica_ports, strict=True):
        site = site.replace(old, f"127.0.0.1:{new}")
    (folder / "costa.conf").write_text(site, encoding="utf-8")
    temps = "\n".join(f"    {k}_temp_path {folder / k};" for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    main = f"""daemon off;
master_process off;
pid {folder / "nginx.pid"};
error_log {folder / "error.log"} warn;
events {{ worker_connections 256; }}
http {{
    log_format upstreams '$upstream_addr $request_method $uri $status';
    access_log {folder / "access.log"} upstreams;
{temps}
    include {folder / "costa.conf"};
}}
"""
    conf = folder / "nginx.conf"
    conf.write_text(main, encoding="utf-8")
    return conf


def wait_http(url: str, timeout_s: float) -> None:
    t0 = time.time()
    while time.time() - t0 < timeout_s:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"{url} did not answer within {timeout_s} s")


def big_photo(path: Path) -> Path:
    """scikit-image's astronaut at 1400 × 1400 px: a real photo of about 3 MB as PNG (over nginx's default 1 MB)."""
    from skimage import data

    Image.fromarray(np.asarray(data.astronaut())).resize((1400, 1400), Image.Resampling.LANCZOS).save(path)
    assert path.stat().st_size > 1_500_000
    return path


def test_the_readme_shows_the_recipe_file_it_names() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "deploy/nginx-costa.conf" in readme
    body = [line for line in RECIPE.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
    shown = {line.strip() for line in readme.splitlines()}
    assert [line for line in body if line.strip() not in shown] == []  # every directive is in the README's copy


@pytest.mark.slow
@pytest.mark.postgresql
def test_an_edit_through_the_balancer_is_seen_by_both_replicas(tmp_path: Path) -> None:
    from gradio_client import Client

    nginx = nginx_binary()
    reason = missing_reason() or (None if nginx else "nginx is not installed (Debian: apt-get install nginx-light)")
    if reason is not None:
        pytest.skip(reason)
    assert nginx is not None
    with pg_server() as server_url:
        db = fresh_database(server_url)
        apps = [make_replica(tmp_path / "home", tmp_path, name, db) for name in ("a", "b")]
        proc = None
        try:
            start_all(apps)
            port = free_port()
            conf = balancer_config(tmp_path, (apps[0].port, apps[1].port), port)
            log = open(tmp_path / "nginx.out", "wb")  # noqa: SIM115  (closed below, after nginx exits)
            proc = subprocess.Popen([nginx, "-p", str(tmp_path), "-c", str(conf), "-e", str(tmp_path / "error.log")],
                                    stdout=log, stderr=log)  # fmt: skip
            wait_http(f"http://127.0.0.1:{port}/", 30)
            client = Client(f"http://127.0.0.1:{port}/", verbose=False)
            sid = client.predict(api_name="/new_session")
            ok, message = edit_once(client, sid, big_photo(tmp_path / "astronaut.png"), "make the image brighter")
            assert ok, message
            seen = client.predict(sid, api_name="/history")
            direct = [Client(a.url, verbose=False).predict(sid, api_name="/history") for a in apps]
        finally:
            if proc is not None:
                proc.terminate()
                proc.wait(timeout=20)
            for a in apps:
                a.stop()
    versions = [v["sha256"] for v in seen["versions"]]
    assert len(versions) == 2, seen  # the upload and the brighter edit
    assert [[v["sha256"] for v in h["versions"]] for h in direct] == [versions, versions]
    served = set(re.findall(r"^(\S+) \S+ /gradio_api/\S* \d+$", (tmp_path / "access.log").read_text(), re.M))
    assert len(served) == 1 and served <= {f"127.0.0.1:{a.port}" for a in apps}, served  # one client, one replica
