"""Reads a trace (the tracer, every call) and a requests-only trace (the tracer with
CUDA_SYS_GEN_TRACE_CALLS=0: every call only forwards) of one program; prints one line."""
import re, sys
from collections import Counter

REQ = re.compile(r'request \d+ "(.*)" (-?\d+) flags (\d+) -> (\S+)')

def read(path):
    reqs, answers, calls, outs, different = set(), set(), [], 0, 0
    for line in open(path, errors="replace"):
        m = REQ.match(line)
        if m:
            reqs.add((m[1], int(m[2]), int(m[3])))
            answers.add(m[4])
            different += "rule DIFFERENT" in line
        elif line.startswith("call "):
            f = line.split(" ")
            calls.append((f[2], f[3].strip("()")))
            outs += " {*" in line
    return reqs, answers, calls, outs, different

name, trace, only = sys.argv[1:4]
t_reqs, t_answers, calls, outs, t_diff = read(trace)
s_reqs, s_answers, s_calls, _, s_diff = read(only)
by_lookup = sum(1 for abi, _ in calls if abi in t_answers)
by_name = Counter(exp for abi, exp in calls if abi not in t_answers)
print(f"{name}: trace {len(calls)} calls, {len(t_reqs)} distinct requests answered; requests-only run "
      f"{len(s_calls)} calls traced, {len(s_reqs)} distinct requests; in both {len(t_reqs & s_reqs)}, only in the trace "
      f"{len(t_reqs - s_reqs)}, only in the requests-only run {len(s_reqs - t_reqs)}; rule DIFFERENT {t_diff} / {s_diff}; "
      f"calls of an ABI some request was answered with {by_lookup}, of ABIs no request named {sum(by_name.values())} "
      f"({', '.join(f'{k} x{v}' for k, v in sorted(by_name.items())) or 'none'}); calls with outputs logged {outs}")
for r in sorted(t_reqs ^ s_reqs)[:10]:
    print(f"  {name}: {'trace only' if r in t_reqs else 'requests-only run only'}: {r}")
