"""Atomic writing: all or nothing, usual permissions."""
import os
import stat

import pytest

from parlai_acute.files import atomic_write, write_json, write_jsonl


def test_failed_write_keeps_old_file_and_leaves_no_temp(tmp_path):
    target = tmp_path / "log.jsonl"
    write_jsonl(target, [{"a": 1}])
    with pytest.raises(RuntimeError):
        with atomic_write(target) as fh:
            fh.write('{"half": ')
            raise RuntimeError("interrupted")
    assert target.read_text() == '{"a": 1}\n'
    assert os.listdir(tmp_path) == ["log.jsonl"]


def test_written_file_follows_umask(tmp_path):
    old = os.umask(0o022)
    try:
        write_json(tmp_path / "x.json", {"k": [1, 2]})
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "x.json").st_mode) == 0o644
    assert '"k"' in (tmp_path / "x.json").read_text()
