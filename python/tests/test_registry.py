"""The registry from Python, on the CPU: compiles need only NVRTC and an explicit arch."""

import json
import os
import threading
import time

import pytest

import kreg
from conftest import requires_no_gpu

SAXPY = r"""
extern "C" __global__ void saxpy(float a, const float* x, float* y, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
"""

POWI = r"""
#include <kreg/kernel.cuh>
KREG_CONSTANT_DEFAULT(int, P, 300, 2);
KREG_CONSTANT_DEFAULT(bool, NEG, 200, false);
extern "C" __global__ void powi(float* x, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float r = 1;
  for (int k = 0; k < P; ++k) r *= x[i];
  x[i] = NEG ? -r : r;
}
"""


def registry(cache_dir, **options):
    return kreg.Registry(arch="sm_90", cache_dir=cache_dir, builtins=False, **options)


def test_compile_gives_a_binary_and_the_disk_serves_the_next_registry(cache_dir):
    r = registry(cache_dir)
    r.register_source("saxpy", SAXPY)
    b = r.compile("saxpy")
    assert b.origin == "compiled"
    assert b.arch == "sm_90"
    assert b.key == "saxpy@sm_90"
    assert b.entries == ["saxpy"]
    assert b.image[:4] == b"\x7fELF" and len(b.image) == b.size
    assert r.stats().compiles == 1
    r.flush_disk_cache()
    again = registry(cache_dir)
    again.register_source("saxpy", SAXPY)
    assert again.compile("saxpy").origin == "disk"
    assert again.stats().disk_hits == 1 and again.stats().compiles == 0


def test_constants_as_a_dict_or_a_key(cache_dir):
    r = registry(cache_dir)
    r.register_source("powi", POWI)
    assert r.compile("powi", {300: 4, 200: True}).key == "powi|200:b1|300:i4@sm_90"
    assert r.compile("powi", "200:b1|300:i4").origin == "compiled"  # the same binary
    assert r.stats().compiles == 1
    with pytest.raises(kreg.InvalidArgument):
        r.compile("powi", {300: 2**40})
    with pytest.raises(ValueError):  # InvalidArgument is a ValueError
        r.compile("powi", {300: "four"})
    with pytest.raises(kreg.InvalidArgument, match="index"):
        r.compile("powi", {301: 1})


def test_errors_have_their_classes_and_codes(cache_dir):
    r = registry(cache_dir)
    with pytest.raises(kreg.KernelNotFound) as missing:
        r.compile("nothing")
    assert isinstance(missing.value, KeyError) and isinstance(missing.value, kreg.Error)
    assert missing.value.code == kreg.ErrorCode.KernelNotFound
    # The class names kreg, so the message does not; nor is it KeyError's quoted repr.
    assert str(missing.value) == "no registered source declares kernel 'nothing'"
    r.register_source("broken", 'extern "C" __global__ void broken() { int x = ; }')
    with pytest.raises(kreg.CompileError) as failed:
        r.compile("broken")
    assert failed.value.code == kreg.ErrorCode.CompileError
    assert "expected an expression" in failed.value.log
    # The source comes back numbered, and what failed as fields, not as text to parse.
    assert failed.value.source == '   1 | extern "C" __global__ void broken() { int x = ; }\n'
    assert failed.value.source_name == "broken" and failed.value.kernel == "broken"
    assert failed.value.key.startswith("broken@sm_")
    assert failed.value.log in str(failed.value)
    with pytest.raises(kreg.InvalidArgument):
        r.register_source("", SAXPY)
    with pytest.raises(kreg.InvalidArgument):
        r.register_source("kreg::mine", SAXPY)
    assert r.stats().failures == 1


def test_entries_and_options(cache_dir):
    r = registry(cache_dir)
    r.register_source(
        "fill",
        "template <class T> __global__ void fill(T* x, T v) { x[threadIdx.x] = v; }",
        entries=["fill_f32=fill<float>", "fill_i32=fill<int>"],
        compile_options=["-use_fast_math"])
    assert r.entry_names("fill") == ["fill_f32", "fill_i32"]
    assert r.source_names() == ["fill"]
    assert r.source_count() == 1
    assert set(r.compile("fill_i32").entries) == {"fill_f32", "fill_i32"}


def test_prewarm_names_pairs_and_progress(cache_dir):
    r = registry(cache_dir)
    r.register_source("saxpy", SAXPY)
    r.register_source("powi", POWI)
    seen = []
    ready = r.prewarm(["saxpy", ("powi", {300: 3}), "unknown"],
                      progress=lambda done, total, label, ok: seen.append((done, total, label, ok)))
    assert ready == 2  # compiled; without a GPU nothing loads, and unknown names are skipped
    assert sorted((s[2], s[3]) for s in seen) == [
        ("powi|300:i3", True), ("saxpy", True), ("unknown", False)]
    assert sorted(s[0] for s in seen) == [1, 2, 3] and all(s[1] == 3 for s in seen)
    report = r.prewarm_all()
    assert report.warmed == 2 and report.skipped == 0 and report.failures == []
    assert r.prewarm_all_requests() == [("powi", {}), ("saxpy", {})]


def test_progress_callback_errors_reach_the_caller(cache_dir):
    r = registry(cache_dir)
    r.register_source("saxpy", SAXPY)

    def fail(done, total, label, ok):
        raise RuntimeError("from the callback")

    with pytest.raises(RuntimeError, match="from the callback"):
        r.prewarm(["saxpy"], progress=fail)


def test_progress_true_without_tqdm_prints_a_line(cache_dir, capfd, monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_tqdm(name, *args, **kwargs):
        if name == "tqdm":
            raise ImportError("no tqdm here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_tqdm)
    r = registry(cache_dir)
    r.register_source("saxpy", SAXPY)
    assert r.prewarm(["saxpy"], progress=True) == 1
    assert "kreg prewarm: 1/1" in capfd.readouterr().err


def test_manifest_round_trip(cache_dir):
    path = os.path.join(cache_dir, "manifest.json")
    with open(path, "w") as f:
        json.dump({"format": "kreg-manifest", "version": 1,
                   "kernels": [{"name": "powi", "constants": "300:i5"}, {"name": "saxpy"}]}, f)
    assert kreg.read_manifest(path) == [("powi", {300: 5}), ("saxpy", {})]
    r = registry(cache_dir)
    r.register_source("saxpy", SAXPY)
    r.register_source("powi", POWI)
    assert r.prewarm_manifest(path) == 2
    assert r.compile("powi", {300: 5}).origin in ("compiled", "disk")
    out = os.path.join(cache_dir, "served.json")
    r.write_manifest(out)
    assert json.load(open(out))["format"] == "kreg-manifest"
    with pytest.raises(kreg.InvalidArgument):
        r.prewarm_manifest(os.path.join(cache_dir, "missing.json"))


def test_the_gil_is_released_while_compiling(cache_dir):
    # A source heavy enough that its compile takes a while.
    body = "\n".join("x[%d] = sinf(x[%d]) * cosf(x[%d]) + %d;" % (i, i, i, i) for i in range(30))
    text = 'extern "C" __global__ void heavy(float* x) {\n' + body + "\n}"
    r = registry(cache_dir, disk_cache=False)
    r.register_source("heavy", text)
    counts = []
    done = threading.Event()

    def count():
        n = 0
        while not done.is_set():
            n += 1
        counts.append(n)

    t = threading.Thread(target=count)
    start = time.perf_counter()
    t.start()
    try:
        r.compile("heavy")
    finally:
        done.set()
        t.join()
    elapsed = time.perf_counter() - start
    # Holding the GIL, the compile would leave the counter a switch interval's worth at most.
    assert elapsed > 0.02
    assert counts[0] > 20000, (counts, elapsed)


def test_stats_fields(cache_dir):
    r = registry(cache_dir)
    s = r.stats()
    assert s.as_dict().keys() >= {"memory_hits", "disk_hits", "compiles", "compile_ms"}
    assert s.compiles == 0 and "compiles" in repr(s)


def test_options_reach_the_registry(cache_dir):
    r = kreg.Registry(arch="sm_80", cache_dir=cache_dir, disk_cache=False, builtins=True,
                      precompiled=False, compile_options=["-lineinfo"], prewarm_threads=1,
                      compile_processes=0, warm_compiler=False)
    assert r.arch == "sm_80"
    assert r.cache_dir == ""  # disk cache off
    assert "activation" in r.source_names()


@requires_no_gpu
def test_get_without_a_gpu_is_no_device(cache_dir):
    r = registry(cache_dir)
    r.register_source("saxpy", SAXPY)
    with pytest.raises(kreg.NoDevice):
        r.get("saxpy")
    assert not r.is_cached("saxpy")


def test_tune_with_a_timer_keeps_its_times(cache_dir):
    space = dict(ints={300: [2, 4, 8]}, bools=[200])
    calls = []

    def timer(constants, launch):
        calls.append(dict(constants))
        return 1.0 + abs(constants[300] - 4) + (0.0 if constants[200] else 0.5)

    r = registry(cache_dir)
    r.register_source("powi", POWI)
    res = r.tune("powi", "n1024", timer=timer, **space)
    assert res.winner == {200: True, 300: 4} and res.ms == 1.0
    assert res.timed == 6 and len(calls) == 6
    assert res.candidates[0].label == "powi|200:b0|300:i2" and res.candidates[0].ok
    assert [c.ms for c in res.candidates] == [3.5, 3.0, 1.5, 1.0, 5.5, 5.0]
    r.flush_disk_cache()

    again = registry(cache_dir)
    again.register_source("powi", POWI)
    assert again.tuned("powi", "n1024", **space) == {200: True, 300: 4}
    assert again.tuned("powi", "another bucket", **space) is None

    def never(constants, launch):
        raise AssertionError("timed %s" % constants)

    assert again.tune("powi", "n1024", timer=never, **space).timed == 0
    with pytest.raises(AssertionError, match="timed"):  # the timer's own error comes through
        again.tune("powi", "another bucket", timer=never, **space)
    with pytest.raises(kreg.InvalidArgument, match="bucket"):
        r.tune("powi", "", timer=timer)
    with pytest.raises(kreg.InvalidArgument, match="refuses every combination"):
        r.tune("powi", "b", timer=timer, ints={300: [2]}, accept=lambda c: False)
    with pytest.raises(kreg.InvalidArgument, match="run function"):
        r.tune("powi", "b", ints={300: [2]})
