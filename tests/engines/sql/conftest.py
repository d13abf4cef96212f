"""The sample warehouse as a SQLite file, and a throwaway PostgreSQL cluster loaded with the same SQL."""

from __future__ import annotations

import glob
import importlib.util
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from app.config import SAMPLE_DB_NOTES, SAMPLE_DB_SCRIPT
from engines.sql.database import build_sqlite, open_engine
from engines.sql.schema import read_notes, read_schema


@pytest.fixture
def bank_db(tmp_path: Path) -> Path:
    target = tmp_path / "bank.sqlite3"
    build_sqlite(SAMPLE_DB_SCRIPT, target)
    return target


@pytest.fixture
def bank_engine(bank_db: Path):
    engine = open_engine(f"sqlite:///{bank_db}")
    yield engine
    engine.dispose()


@pytest.fixture
def bank_schema(bank_engine):
    return read_schema(bank_engine, notes=read_notes(SAMPLE_DB_NOTES))


def _skip(message: str) -> None:
    """Missing PostgreSQL is a skip locally, a failure where TURNRAG_REQUIRE_SYSTEM_DEPS is set (CI)."""
    if os.environ.get("TURNRAG_REQUIRE_SYSTEM_DEPS"):
        pytest.fail(message)
    pytest.skip(message)


def _pg_bin() -> Path | None:
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(versions[-1]).parent if versions else None


@pytest.fixture(scope="session")
def postgres():
    """(reader URL, owner URL) of a cluster in a temp folder: ``reader`` may only SELECT; the owner may
    do anything (to show that the connection itself, not the role, stops writes). Skipped with the
    reason when PostgreSQL or psycopg is missing or the cluster does not start."""
    bindir = _pg_bin()
    if bindir is None:
        _skip("PostgreSQL is not installed (apt-get install postgresql; `make test` does): skipped")
    if importlib.util.find_spec("psycopg") is None:
        _skip("psycopg is not installed (pip install 'psycopg[binary]'): skipped")
    run_as: list[str] = []
    base = Path(tempfile.mkdtemp(prefix="turnrag-pg-"))
    if os.geteuid() == 0:  # initdb refuses to run as root
        try:
            user = pwd.getpwnam("postgres")
        except KeyError:
            shutil.rmtree(base, ignore_errors=True)
            _skip("running as root and there is no 'postgres' user to run PostgreSQL as: skipped")
        os.chown(base, user.pw_uid, user.pw_gid)
        run_as = ["runuser", "-u", "postgres", "--"]
    data, log = base / "data", base / "server.log"

    def run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run([*run_as, *args], capture_output=True, text=True, timeout=120, check=check)

    psql = [str(bindir / "psql"), "-h", str(base), "-U", "owner", "-v", "ON_ERROR_STOP=1", "-q"]
    try:
        run(str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "owner", "-E", "UTF8", "--locale", "C")
        run(str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", "60", "-o",
            f"-k {base} -c listen_addresses='' -c fsync=off -c max_connections=20", "start")
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
        detail = getattr(exc, "stderr", "") or (log.read_text() if log.exists() else "")
        shutil.rmtree(base, ignore_errors=True)
        _skip(f"a throwaway PostgreSQL cluster did not start ({exc}; {str(detail)[-300:]}): skipped")
    try:
        run(*psql, "-d", "postgres", "-c", "CREATE DATABASE bank")
        script = base / "bank.sql"
        shutil.copy(SAMPLE_DB_SCRIPT, script)
        os.chmod(script, 0o644)
        run(*psql, "-d", "bank", "-f", str(script))
        run(*psql, "-d", "bank", "-c", "CREATE ROLE reader LOGIN; GRANT CONNECT ON DATABASE bank TO reader; "
            "GRANT USAGE ON SCHEMA public TO reader; GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader;")
        yield f"postgresql://reader@/bank?host={base}", f"postgresql://owner@/bank?host={base}"
    finally:
        run(str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop", check=False)
        shutil.rmtree(base, ignore_errors=True)
