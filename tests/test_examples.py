"""``examples/train.py``: the training CLI end to end on synthetic data (subprocess), its output
files and metadata checked against plain NumPy recomputation, exact resume, legacy data files,
bad command lines; its helper functions against NumPy references."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import _deps

torch = pytest.importorskip("torch")
vpoc = pytest.importorskip("vpoc")

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "examples" / "train.py"
SMALL = ["--data", "synthetic", "--synthetic_sessions", "40", "--bars_per_session", "90",
         "--batch_size", "8", "--device", "cpu", "--hidden_layers", "16,8"]


def _missing() -> list:
    missing = [f"vpoc.{name}" for name in ("session_features", "bar_features")
               if not hasattr(vpoc, name)]
    try:
        importlib.import_module("vpoc.torch")
    except ImportError:
        missing.append("vpoc.torch")
    return missing


needs_features = pytest.mark.skipif(bool(_missing()), reason=f"{', '.join(_missing())} not landed yet")


def load_script():
    spec = importlib.util.spec_from_file_location("vpoc_example_train", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_inprocess(args, capsys, expect=0):
    """``main(args)`` in this process (what the subprocess runs, without a new interpreter):
    returns (stdout, stderr)."""
    train = load_script()
    try:
        rc = train.main([str(a) for a in args])
    except SystemExit as e:  # argparse errors
        rc = e.code
    out, err = capsys.readouterr()
    assert rc == expect, f"stdout:\n{out}\nstderr:\n{err}"
    return out, err


def run(args, tmp_path, expect=0):
    proc = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path, env=dict(os.environ, PYTHONWARNINGS="error"))
    assert proc.returncode == expect, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def run_dirs(out: Path):
    return sorted(p for p in out.iterdir() if p.name.startswith("train_"))


def metadata(run_dir: Path) -> dict:
    with open(run_dir / "best_model_metadata.json") as f:
        return json.load(f)  # strict JSON: json.load would accept NaN, so also check below


# --------------------------------------------------------------------------- independent references


def ref_session_setup(n_sessions, bars, seed=0, val_fraction=0.2):
    """Features, next-session direction targets, train/val rows and train mean/std, plainly."""
    b = vpoc.synth.es_bars(n_sessions=n_sessions, bars_per_session=bars, seed=seed)
    table = vpoc.session_features(b.high, b.low, b.close, b.volume, open=b.open,
                                  timestamp=b.timestamp, offsets=b.offsets, tick_size=0.25)
    values = np.asarray(table.values, dtype=np.float64)
    closes = np.array([b.close[b.offsets[s + 1] - 1] for s in range(n_sessions)])
    rows = list(range(n_sessions - 1))  # session s predicts s+1: the last session has no target
    y = np.array([1.0 if closes[s + 1] > closes[s] else 0.0 for s in rows])
    n_train = int(math.floor((1 - val_fraction) * len(rows)))
    train = values[:n_train]
    mean = np.array([np.mean(c[np.isfinite(c)]) if np.isfinite(c).any() else 0.0 for c in train.T])
    std = np.array([np.std(c[np.isfinite(c)]) if np.isfinite(c).any() else 1.0 for c in train.T])
    std[~(std > 0)] = 1.0
    return dict(values=values, y=y, n_train=n_train, mean=mean, std=std,
                columns=list(table.columns), labels=b.session_labels)


# --------------------------------------------------------------------------- end to end


@needs_features
def test_train_writes_run_and_resumes_exactly(tmp_path, capsys):
    out = tmp_path / "runs"
    run([*SMALL, "--epochs", "2", "--output", str(out)], tmp_path)
    (first,) = run_dirs(out)
    for name in ("best_model.pt", "best_model_metadata.json", "last_checkpoint.pt"):
        assert (first / name).is_file()
    text = (first / "best_model_metadata.json").read_text()
    assert "NaN" not in text and "Infinity" not in text
    meta = metadata(first)
    ref = ref_session_setup(40, 90)
    assert meta["features"]["names"] == ref["columns"]
    assert meta["features"]["n_features"] == len(ref["columns"])
    np.testing.assert_allclose(meta["scaling"]["mean"], ref["mean"], rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(meta["scaling"]["std"], ref["std"], rtol=1e-6, atol=1e-9)
    assert meta["split"]["n_train"] == ref["n_train"] == 31
    assert meta["split"]["n_val"] == 39 - ref["n_train"]
    assert meta["split"]["train_sessions"] == [int(ref["labels"][0]), int(ref["labels"][30])]
    assert meta["split"]["val_sessions"] == [int(ref["labels"][31]), int(ref["labels"][38])]
    arch = meta["architecture"]
    assert arch["hidden_layers"] == [16, 8] and arch["n_inputs"] == len(ref["columns"])
    n_in = len(ref["columns"])
    assert arch["n_parameters"] == (n_in * 16 + 16) + (16 * 8 + 8) + (8 + 1)
    assert meta["training"]["epochs_completed"] == 2 and meta["training"]["loss"] == "BCEWithLogitsLoss"
    hist = meta["metrics"]["history"]
    assert [h["epoch"] for h in hist] == [1, 2]
    assert all(math.isfinite(h["train_loss"]) and 0 <= h["val_accuracy"] <= 1 for h in hist)
    assert meta["metrics"]["best_val_loss"] == min(h["val_loss"] for h in hist)
    t = meta["timing"]
    assert t["feature_build_s"] >= 0 and len(t["epoch_times_s"]) == 2 and t["total_s"] > 0
    assert meta["target"]["scaling"]["train_up_fraction"] == pytest.approx(ref["y"][:31].mean())

    # resume from the last checkpoint for one more epoch ...
    run([*SMALL, "--epochs", "1", "--output", str(out), "--resume",
         str(first / "last_checkpoint.pt")], tmp_path)
    resumed = [d for d in run_dirs(out) if d != first]
    assert len(resumed) == 1
    rmeta = metadata(resumed[0])
    assert rmeta["training"]["epochs_completed"] == 3
    assert rmeta["training"]["resumed_from"] == str(first / "last_checkpoint.pt")
    assert rmeta["metrics"]["history"][:2] == hist
    assert (resumed[0] / "best_model.pt").is_file()
    # ... which continues exactly like an uninterrupted 3-epoch run (optimizer, RNG, sampler state)
    straight_out = tmp_path / "straight"
    run_inprocess([*SMALL, "--epochs", "3", "--output", straight_out], capsys)
    smeta = metadata(run_dirs(straight_out)[0])
    strip = [{k: v for k, v in h.items() if k != "epoch_time_s"} for h in smeta["metrics"]["history"]]
    assert strip == [{k: v for k, v in h.items() if k != "epoch_time_s"}
                     for h in rmeta["metrics"]["history"]]
    a = torch.load(resumed[0] / "last_checkpoint.pt", weights_only=True)["model_state"]
    b = torch.load(run_dirs(straight_out)[0] / "last_checkpoint.pt", weights_only=True)["model_state"]
    # the same weights up to float reordering (torch's CPU kernels may split work differently
    # between the two processes when the machine is loaded)
    assert all(torch.allclose(a[k], b[k], rtol=1e-5, atol=1e-7) for k in a)


@needs_features
def test_best_checkpoint_reproduces_its_validation_loss(tmp_path, capsys):
    out = tmp_path / "runs"
    run_inprocess([*SMALL, "--epochs", "3", "--output", out], capsys)
    (rd,) = run_dirs(out)
    meta = metadata(rd)
    ref = ref_session_setup(40, 90)
    train = load_script()
    arch = meta["architecture"]
    model = train.MLP(arch["n_inputs"], arch["hidden_layers"], arch["dropout_rate"])
    ckpt = torch.load(rd / "best_model.pt", weights_only=True)
    assert ckpt["epoch"] == meta["metrics"]["best_epoch"]
    model.load_state_dict(ckpt["model_state"])
    model.eval()
    x = (ref["values"] - ref["mean"]) / ref["std"]
    x[~np.isfinite(x)] = 0.0
    n_train = ref["n_train"]
    xv = torch.from_numpy(x[n_train:39].astype(np.float32))
    yv = ref["y"][n_train:]
    with torch.no_grad():
        logits = model(xv).double().numpy()
    p = 1 / (1 + np.exp(-logits))
    bce = -np.mean(yv * np.log(p) + (1 - yv) * np.log(1 - p))
    assert bce == pytest.approx(meta["metrics"]["best_val_loss"], rel=1e-5)
    acc = np.mean((logits > 0) == (yv > 0.5))
    assert acc == pytest.approx(meta["metrics"]["best"]["val_accuracy"])


@needs_features
def test_train_bar_level_regression_mixed_precision(tmp_path, capsys):
    out = tmp_path / "runs"
    run_inprocess(["--data", "synthetic", "--synthetic_sessions", "6", "--bars_per_session", "60",
         "--level", "bar", "--window", "8", "--stride", "3", "--target", "return",
         "--use_mixed_precision", "--epochs", "1", "--batch_size", "32", "--device", "cpu",
         "--hidden_layers", "16", "--output", out], capsys)
    meta = metadata(run_dirs(out)[0])
    n_f = meta["features"]["n_features"]
    assert meta["architecture"]["n_inputs"] == 8 * n_f
    assert meta["training"]["amp_dtype"] == "bfloat16" and meta["training"]["loss"] == "MSELoss"
    # windows per session: ends at 7, 10, ..., <= 58 (the target bar must exist): 18 per session
    s = meta["split"]
    assert s["n_train"] + s["purged"] + s["n_val"] == 6 * 18
    assert s["n_train"] == math.floor(0.8 * 6 * 18)
    b = vpoc.synth.es_bars(n_sessions=6, bars_per_session=60, seed=0)
    r = np.concatenate([[np.nan], b.close[1:] / b.close[:-1] - 1])
    r[b.offsets[:-1]] = np.nan
    ends = [a + e for a in b.offsets[:-1] for e in range(7, 59, 3)]
    y_train = r[np.array(ends[:s["n_train"]]) + 1]
    ts = meta["target"]["scaling"]
    assert ts["mean"] == pytest.approx(y_train.mean(), rel=1e-4, abs=1e-9)
    assert ts["std"] == pytest.approx(y_train.std(), rel=1e-3)
    assert math.isfinite(meta["metrics"]["final"]["val_loss"])
    assert 0 <= meta["metrics"]["final"]["val_directional_accuracy"] <= 1


@needs_features
@_deps.needs("pandas", "pandas_market_calendars")  # vpoc.io, and Globex sessions with the CME calendar
@pytest.mark.parametrize("fmt", ["legacy", "csv"])
def test_train_reads_legacy_files(tmp_path, capsys, fmt):
    pd = _deps.module("pandas")
    if importlib.util.find_spec("vpoc.io") is None or importlib.util.find_spec("vpoc.sessions") is None:
        pytest.skip("vpoc.io / vpoc.sessions not landed yet")
    b = vpoc.synth.es_bars(n_sessions=12, seed=3)  # 17:00-16:00 Chicago (CST in January)
    local = pd.to_datetime(b.timestamp, unit="ns", utc=True).tz_convert("America/Chicago")
    if fmt == "legacy":
        path = tmp_path / "ES_1min.txt"
        stamps = local.strftime("%Y%m%d %H%M%S")
        lines = [f"{t};{o:.2f};{h:.2f};{lo:.2f};{c:.2f};{v}" for t, o, h, lo, c, v in
                 zip(stamps, b.open, b.high, b.low, b.close, b.volume)]
        path.write_text("\n".join(lines) + "\n")
    else:
        path = tmp_path / "ES_1min.csv"
        pd.DataFrame({"timestamp": local.strftime("%Y-%m-%d %H:%M:%S"), "open": b.open,
                      "high": b.high, "low": b.low, "close": b.close,
                      "volume": b.volume}).to_csv(path, index=False)
    out = tmp_path / "runs"
    run_inprocess(["--data", path, "--tz", "America/Chicago", "--epochs", "1", "--batch_size", "4",
                   "--val_fraction", "0.3", "--device", "cpu", "--output", out], capsys)
    meta = metadata(run_dirs(out)[0])
    assert meta["data"]["n_sessions"] == 12 and meta["data"]["n_bars"] == len(b)
    assert meta["data"]["first_session"] == int(b.session_labels[0])
    assert meta["data"]["last_session"] == int(b.session_labels[-1])


@needs_features
def test_data_fraction_keeps_leading_sessions(tmp_path, capsys):
    out = tmp_path / "runs"
    run_inprocess([*SMALL, "--epochs", "1", "--data_fraction", "0.5", "--output", out], capsys)
    meta = metadata(run_dirs(out)[0])
    labels = vpoc.synth.es_bars(n_sessions=40, bars_per_session=90).session_labels
    assert meta["data"]["n_sessions"] == 20 and meta["data"]["n_bars"] == 20 * 90
    assert meta["data"]["last_session"] == int(labels[19])


@pytest.mark.parametrize("extra, message", [
    (["--hidden_layers", "64,x"], "--hidden_layers must be comma-separated"),
    (["--hidden_layers", "64,0"], "--hidden_layers sizes must be >= 1"),
    (["--dropout_rate", "1.0"], "--dropout_rate must be in [0, 1)"),
    (["--data_fraction", "0"], "--data_fraction must be in (0, 1]"),
    (["--learning_rate", "-1"], "--learning_rate must be > 0"),
    (["--epochs", "0"], "--epochs must be >= 1"),
    (["--val_fraction", "1"], "--val_fraction must be in (0, 1)"),
    (["--level", "tick"], "invalid choice: 'tick'"),
])
def test_bad_command_lines(tmp_path, capsys, extra, message):
    _, err = run_inprocess([*SMALL, "--output", tmp_path, *extra], capsys, expect=2)
    assert message in err
    assert not list(tmp_path.glob("train_*"))


def test_bad_command_line_exit_status_of_the_script(tmp_path):
    proc = run([*SMALL, "--hidden_layers", "128;64"], tmp_path, expect=2)
    assert "train.py: error: --hidden_layers must be comma-separated" in proc.stderr


@needs_features
@pytest.mark.parametrize("extra, message", [
    (["--data", "no_such_file.txt"], "--data no_such_file.txt: no such file or folder"),
    (["--resume", "missing.pt"], "--resume missing.pt: no checkpoint file"),
    (["--device", "nonsense"], "--device must be 'auto', 'cpu', 'cuda' or 'cuda:N'"),
    (["--synthetic_sessions", "2"], "too few to split"),
])
def test_bad_runs_exit_2(tmp_path, capsys, monkeypatch, extra, message):
    monkeypatch.chdir(tmp_path)
    _, err = run_inprocess([*SMALL, "--output", tmp_path / "runs", *extra], capsys, expect=2)
    assert err.startswith("train.py: error: ") and message in err and "Traceback" not in err


@needs_features
@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error when torch has no GPU")
def test_cuda_without_gpu_is_a_clear_error(tmp_path, capsys):
    _, err = run_inprocess([*SMALL, "--device", "cuda", "--output", tmp_path], capsys, expect=2)
    assert "torch sees no CUDA device" in err


@needs_features
def test_resume_with_other_level_is_refused(tmp_path, capsys):
    out = tmp_path / "runs"
    run_inprocess([*SMALL, "--epochs", "1", "--output", out], capsys)
    ck = run_dirs(out)[0] / "last_checkpoint.pt"
    _, err = run_inprocess([*SMALL, "--level", "bar", "--epochs", "1", "--output", out,
                            "--resume", ck], capsys, expect=2)
    assert "trained with --level session, not bar" in err
    _, err = run_inprocess([*SMALL, "--hidden_layers", "32", "--epochs", "1", "--output", out,
                            "--resume", ck], capsys, expect=2)
    assert "the checkpoint's model has --hidden_layers [16, 8], not [32]" in err


@needs_features
def test_resume_keeps_the_checkpoint_learning_rate_unless_given(tmp_path, capsys):
    out = tmp_path / "runs"
    run_inprocess([*SMALL, "--epochs", "1", "--learning_rate", "0.005", "--output", out], capsys)
    ck = run_dirs(out)[0] / "last_checkpoint.pt"
    run_inprocess([*SMALL, "--epochs", "1", "--output", out, "--resume", ck], capsys)
    run_inprocess([*SMALL, "--epochs", "1", "--learning_rate", "0.0001", "--output", out,
                   "--resume", ck], capsys)
    rates = [metadata(d)["training"]["learning_rate"] for d in run_dirs(out)]
    assert rates == [0.005, 0.005, 0.0001]
    lr = torch.load(run_dirs(out)[-1] / "last_checkpoint.pt", weights_only=True)
    assert lr["optimizer_state"]["param_groups"][0]["lr"] == 0.0001


# --------------------------------------------------------------------------- helpers vs NumPy


def test_helpers_against_numpy():
    train = load_script()
    assert train.parse_hidden_layers("128,64") == [128, 64]
    assert train.parse_hidden_layers(" 32 ") == [32] and train.parse_hidden_layers("") == []
    rng = np.random.default_rng(0)
    v = rng.normal(3.0, 2.0, size=(50, 5))
    v[rng.random(v.shape) < 0.2] = np.nan
    v[:, 3] = np.nan            # no finite value: (0, 1)
    v[:, 4] = 7.0               # constant: std 1
    v[5, 4] = np.inf            # inf counts as missing
    mean, std = train.standardization(v)
    for j in range(3):
        c = v[:, j][np.isfinite(v[:, j])]
        assert mean[j] == pytest.approx(c.mean()) and std[j] == pytest.approx(c.std())
    assert (mean[3], std[3]) == (0.0, 1.0) and (mean[4], std[4]) == (7.0, 1.0)
    z = train.apply_standardization(v, mean, std)
    assert z.dtype == np.float32 and np.isfinite(z).all()
    ok = np.isfinite(v)
    np.testing.assert_allclose(z[ok], ((v - mean) / std)[ok], rtol=1e-6, atol=1e-6)
    assert (z[~ok] == 0).all()
    close = np.array([10.0, 11.0, 12.0, 6.0, 3.0, 6.0])
    offsets = np.array([0, 3, 3, 6])
    np.testing.assert_array_equal(train.session_closes(close, offsets), [12.0, np.nan, 6.0])
    r = train.bar_returns(close, offsets)
    np.testing.assert_allclose(r, [np.nan, 0.1, 1 / 11, np.nan, -0.5, 1.0])
    np.testing.assert_allclose(train.returns(np.array([2.0, 3.0, np.nan, 1.0])),
                               [np.nan, 0.5, np.nan, np.nan])
    model = train.MLP(6, [4, 3], 0.5)
    assert model(torch.zeros(2, 6)).shape == (2,) and model(torch.zeros(2, 3, 2)).shape == (2,)
    assert [m.out_features for m in model.modules() if isinstance(m, torch.nn.Linear)] == [4, 3, 1]


# --------------------------------------------------------------------------- live_replay.py

LIVE_SCRIPT = ROOT / "examples" / "live_replay.py"


@needs_features
def test_live_replay_levels_and_predictions_equal_batch(tmp_path, capsys):
    """The example's live POC/VA and model predictions equal the batch developing series and the
    model applied to windows of the batch bar_features table."""
    spec = importlib.util.spec_from_file_location("vpoc_example_live_replay", LIVE_SCRIPT)
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    args = ex.parse_args(["--synthetic_sessions", "5", "--bars_per_session", "60", "--window", "4",
                          "--train_epochs", "1", "--replay_sessions", "2", "--print_every", "25"])
    model = ex.load_model(ex.tiny_checkpoint(args, str(tmp_path)))
    res = ex.replay(args, model)
    out = capsys.readouterr().out
    assert "POC" in out and "replayed 120 bars of 2 sessions live" in out
    d, a = res["data"], res["start"]
    h, lo, c, v, o, ts = (d[k] for k in ("high", "low", "close", "volume", "open", "timestamp"))
    dev = vpoc.from_bars(h, lo, c, v, open=o, offsets=d["offsets"], tick_size=0.25, developing=True)
    assert np.array_equal(res["levels"][:, 0], dev.dev_poc[a:])
    assert np.array_equal(res["levels"][:, 1], dev.dev_vah[a:])
    assert np.array_equal(res["levels"][:, 2], dev.dev_val[a:])
    table = vpoc.bar_features(h, lo, c, v, open=o, timestamp=ts, offsets=d["offsets"], tick_size=0.25)
    x = ex._train_module().apply_standardization(table.values, model["mean"], model["std"])
    W = model["window"]
    expect = np.full(len(res["preds"]), np.nan)
    for s in (3, 4):
        for i in range(int(d["offsets"][s]) + W - 1, int(d["offsets"][s + 1])):
            with torch.no_grad():
                y = float(model["model"](torch.from_numpy(x[i - W + 1:i + 1][None]))[0])
            expect[i - a] = 1.0 / (1.0 + np.exp(-y))
    assert np.array_equal(np.isnan(res["preds"]), np.isnan(expect))
    np.testing.assert_allclose(res["preds"], expect, rtol=0, atol=0)


@needs_features
@_deps.needs("pandas", "pandas_market_calendars")
def test_23_1_train_and_live_replay_pass_label_and_interval(tmp_path, capsys):
    """A UTC file stamped at bar closes, read with --label close (and --interval), gives the same
    sessions and bars as the open-stamped file; without it the sessions lose their 16:00 CT bar."""
    import inspect as _inspect

    if "label" not in _inspect.signature(vpoc.io.read_bars).parameters:
        pytest.skip("vpoc.io.read_bars has no label= yet")
    pd = _deps.module("pandas")
    train = load_script()
    b = vpoc.synth.es_bars(n_sessions=6, seed=4)
    utc = pd.to_datetime(b.timestamp, unit="ns", utc=True)

    def write(path, stamps):
        lines = [f"{t};{o:.2f};{h:.2f};{lo:.2f};{c:.2f};{v}" for t, o, h, lo, c, v in
                 zip(stamps.strftime("%Y%m%d %H%M%S"), b.open, b.high, b.low, b.close, b.volume)]
        path.write_text("\n".join(lines) + "\n")
        return path

    opened = write(tmp_path / "open.txt", utc)
    closed = write(tmp_path / "close.txt", utc + pd.Timedelta(minutes=1))
    base = ["--tz", "UTC", "--device", "cpu"]
    want = train.load_bars(train.parse_args(["--data", str(opened), *base]))
    np.testing.assert_array_equal(want["timestamp"], b.timestamp)
    for extra in (["--label", "close"], ["--label", "close", "--interval", "60"],
                  ["--label", "close", "--interval", "1min"]):
        if "--interval" in extra:
            got = train.load_bars(train.parse_args(["--data", str(closed), *base, *extra]))
        else:  # the interval is inferred, and the reader says so
            with pytest.warns(vpoc.GuessedDefaultWarning):
                got = train.load_bars(train.parse_args(["--data", str(closed), *base, *extra]))
        for k in ("timestamp", "open", "high", "low", "close", "volume", "offsets", "labels"):
            np.testing.assert_array_equal(got[k], want[k], err_msg=f"{extra} {k}")
    with pytest.warns(vpoc.DroppedRowsWarning):  # read as opens: every 16:00 close stamp is left out
        wrong = train.load_bars(train.parse_args(["--data", str(closed), *base]))
    assert len(wrong["close"]) == len(b) - 6
    out = tmp_path / "runs"
    run_inprocess(["--data", closed, *base, "--label", "close", "--interval", "1min", "--epochs", "1",
                   "--batch_size", "4",
                   "--val_fraction", "0.3", "--output", out], capsys)
    meta = metadata(run_dirs(out)[0])
    assert meta["data"]["label"] == "close" and meta["data"]["n_bars"] == len(b)
    # live_replay passes them through to the data it replays and to its tiny model's training
    spec = importlib.util.spec_from_file_location("vpoc_example_live_replay2", LIVE_SCRIPT)
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    args = ex.parse_args(["--data", str(closed), "--tz", "UTC", "--label", "close", "--interval", "60",
                          "--window", "4", "--train_epochs", "1", "--replay_sessions", "1",
                          "--print_every", "0"])
    res = ex.replay(args, ex.load_model(ex.tiny_checkpoint(args, str(tmp_path / "live"))))
    np.testing.assert_array_equal(res["data"]["timestamp"], b.timestamp)
