"""A planted package whose names and descriptions carry terminal escapes (OSC 8 links to a local file,
clear-screen, a title change) and markdown/HTML that points at local files."""

from kprof_mcp.kernel import DTYPE_PARAM, KernelPackage, Param, Plan, Stage, StageModel, Version

ESC = "\x1b]8;;file:///etc/shadow\x07click\x1b]8;;\x07\x1b[2J\x1b]0;pwned\x07"
MD = '![x](file:///root/.ssh/id_rsa) <img src="file:///etc/shadow"> [docs](../../../../../../etc/passwd) <script>alert(1)</script>'


def _inputs(p, device):
    import torch

    x = torch.ones(p["n"], device=device)
    return {"x": x, "y": torch.empty_like(x)}


def _build(inputs, p):
    import torch

    x, y = inputs["x"], inputs["y"]

    def run():
        torch.mul(x, 2.0, out=y)

    return Plan(stages=[Stage("st", run, tiling={"impl": "torch.mul" + ESC + MD})], output=lambda: y)


KERNEL = KernelPackage(
    name="esc",
    description="y = 2x " + ESC + MD,
    params=(Param("n", 1024, min=1, max=1 << 30), DTYPE_PARAM("float32")),
    make_inputs=_inputs,
    reference=lambda inputs, p: inputs["x"] * 2,
    versions=(Version("v0", "torch.mul " + ESC + MD, (StageModel("st", lambda p: p["n"], lambda p: 8 * p["n"]),), _build),),
    memory_bytes=lambda p: 2 * p["n"] * 4,
)
