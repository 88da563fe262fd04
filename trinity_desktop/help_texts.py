"""Help written for people: formatted text without code names, file paths or backticks.

`PRESSURE_HELP` says in words what `model/formulas/pressure.py` computes (its docstring is the developers'
version of the same definition; tests/ui/test_main_window.py checks that the two name the same formulas and
default efficiencies).
"""

from __future__ import annotations

from trinity_desktop.model.inputs.scenario import Efficiency

_EFF = Efficiency()

PRESSURE_HELP = f"""
<h3>How the three pressures are computed</h3>
<p>A <b>pressure</b> is the share of one resource's limit that the scenario uses: <b>1.0</b> means that
resource is at its limit. Rates are the achievable ones: the datasheet peak times the scenario's efficiency
(by default {100 * _EFF.compute:.0f}% of peak compute, {100 * _EFF.hbm:.0f}% of memory bandwidth and
{100 * _EFF.network:.0f}% of link bandwidth), so the resource that sets the step time reads 1.0.</p>
<table cellspacing="6">
<tr><td><b>Compute</b></td><td>FLOPs of the step ÷ (step time × devices × achievable FLOP/s).<br>
1.0: the tensor cores are busy for the whole step.</td></tr>
<tr><td><b>Bandwidth</b></td><td>the busiest link's bytes ÷ (step time × its achievable bandwidth), over
memory (HBM), the links inside a node, the network between nodes, the host link and storage.<br>
1.0: that link moves data for the whole step.</td></tr>
<tr><td><b>Memory</b></td><td>bytes held per device ÷ its memory capacity.<br>
1.0: the memory is full; above 1 the step does not fit.</td></tr>
</table>
<p>Compute and bandwidth cannot exceed 1 (a resource cannot be busier than always); memory can, so a
scenario that does not fit reads above 1.</p>
<p><b>Hot means constrained.</b> The <b>binding</b> resource is the one with the highest pressure, the one
nearest its limit: in every row of the workload heatmap the hottest cell is the outlined one. On a tie,
memory binds before bandwidth, and bandwidth before compute: a capacity limit is harder than a rate limit.
This is the roofline's reading of time (whichever of computing and moving data is busier bounds the step;
Williams et al., 2009) extended with capacity (the memory wall: a step that does not fit cannot run;
Rajbhandari et al., 2020).</p>
<p>The triangle places a workload by the three pressures, each capped at 1 and scaled so that they sum to 1:
a point near a corner leans on that resource.</p>
"""
