import pytest

from kprof_mcp.devices import UnknownDeviceError, load_devices, match_device, try_match_device


@pytest.mark.parametrize(
    "name,key",
    [
        ("NVIDIA H100 80GB HBM3", "H100_SXM"),
        ("NVIDIA H100 PCIe", "H100_PCIE"),
        ("NVIDIA H200", "H200"),
        ("NVIDIA H200 NVL", "H200"),
        ("NVIDIA A100-SXM4-80GB", "A100_SXM"),
        ("NVIDIA A100-SXM4-40GB", "A100_SXM"),
        ("NVIDIA A100 80GB PCIe", "A100_PCIE"),
        ("NVIDIA A100-PCIE-40GB", "A100_PCIE"),
        ("NVIDIA L40S", "L40S"),
        ("NVIDIA GeForce RTX 4090", "RTX_4090"),
        ("NVIDIA B200", "B200"),
    ],
)
def test_names_torch_reports_match_the_right_entry(name, key):
    assert match_device(name).key == key


def test_table_has_every_required_device_with_complete_peaks():
    keys = {d.key for d in load_devices()}
    assert {"H100_SXM", "H100_PCIE", "H200", "A100_SXM", "A100_PCIE", "L40S", "RTX_4090", "B200"} <= keys
    for d in load_devices():
        assert d.sm_count > 0 and d.l2_bytes > 0 and d.peak_gbps > 0
        for dtype in ("float32", "tfloat32", "bfloat16", "float16"):
            assert d.peak_tflops[dtype] > 0, (d.key, dtype)


def test_ridge_point_is_flop_per_byte_not_tflops_over_gbps():
    h100 = match_device("NVIDIA H100 80GB HBM3")
    assert h100.ridge_flop_per_byte("bfloat16", tensor_cores=True) == pytest.approx(989.4e12 / 3350e9)
    assert 290 < h100.ridge_flop_per_byte("bfloat16", True) < 300
    # A SIMT kernel is bounded by the FP32 rate, not the tensor-core rate.
    assert h100.peak_flops_per_s("bfloat16", tensor_cores=False) == pytest.approx(66.9e12)
    assert h100.peak_flops_per_s("float32", tensor_cores=True) == pytest.approx(494.7e12)


def test_unknown_device_gives_a_clear_message_and_no_peaks():
    with pytest.raises(UnknownDeviceError, match="not in kprof_mcp/devices.json.*timings are still measured"):
        match_device("Tesla T4")
    spec, note = try_match_device("Tesla T4")
    assert spec is None and "Tesla T4" in note
    assert try_match_device(None) == (None, "no GPU: CPU timing, no device peaks apply")
