"""The qemu launcher's closing report: the nodes' boot and verdict times, the
job's case table across nodes, link-training failures by port, what the link
layer did to keep the links up, and the cluster's verdict (docs/qemu.md)."""
from __future__ import annotations

import os


def fmt_ns(ns: float) -> str:
    if ns >= 1e9:
        return f"{ns / 1e9:.2f} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.1f} ms"
    return f"{ns / 1e3:.0f} us"


def report(cl, timed_out: bool, nics: int) -> int:
    a = cl.a
    n = len(cl.vms)
    print()
    print(f"{'node':<8} {'/init':>7} {'ready':>7} {'trained':>8} {'verdict':>8}  result  ports")

    def t(x):
        return f"{cl.elapsed(x):6.1f}s" if x is not None else "      -"

    for v in cl.vms:
        if v.verdict:
            result = v.verdict
        elif timed_out:
            result = "TIMEOUT"
        elif v.stopped_by_us:
            result = "STOPPED"
        else:
            result = "NOVERDICT"
        ports = ("bypass" if v.bypass_ports else "kernel" if v.kernel_ports else "-")
        print(f"{v.name:<8} {t(v.t_pid1)} {t(v.t_ready)} {t(v.t_trained):>8} {t(v.t_verdict):>8}  {result:<7} {ports}")

    # The self-test (or any job's) cases, across nodes.
    names: list[tuple] = []
    agg: dict[tuple, list] = {}
    for v in cl.vms:
        for c in v.cases:
            key = (c.get("coll", ""), c.get("algo", ""), c.get("name", ""))
            if key not in agg:
                agg[key] = [0, 0, 0.0, "", 0]  # passed, failed, slowest ns, first failure, skipped
                names.append(key)
            r = agg[key]
            if c.get("result") == "PASS":
                r[0] += 1
            elif c.get("result") == "SKIP":  # not applicable on this partition, with the reason
                r[4] += 1
                r[3] = r[3] or c.get("detail", "")
            else:
                r[1] += 1
                r[3] = r[3] or f"{v.name}: {c.get('detail', '')}"
            try:
                r[2] = max(r[2], float(c.get("ns", 0)))
            except ValueError:
                pass
    if names:
        print()
        w = max(len(" ".join(k).strip()) for k in names)
        print(f"{a.job + ' case':<{w}}  {'passed':>7}  {'slowest':>9}")
        for k in names:
            r = agg[k]
            tail = f"  FAIL {r[3]}" if r[1] else f"  SKIP {r[3]}" if r[4] else ""
            print(f"{' '.join(k).strip():<{w}}  {r[0]:>3}/{r[0] + r[1] + r[4]:<3}  {fmt_ns(r[2]):>9}" + tail)

    # Link training failures, by port.
    errs = [(v, e) for v in cl.vms for e in v.link_errors]
    if errs:
        print()
        print("link training failed:")
        for v, e in errs:
            print(f"  node {v.name}: {e}")
    failed = [v for v in cl.vms if v.verdict != "PASS"]
    for v in failed:
        if v.link_errors:
            continue
        if v.reason:
            why = v.reason
        elif timed_out:
            why = "no verdict before the timeout"
        elif v.stopped_by_us and cl.first_fail:
            why = (f"no verdict yet; stopped {a.fail_grace:.0f} s (--fail-grace) after node {cl.first_fail[0].name} "
                   f"failed")
        else:
            why = f"no verdict (VM exited with status {v.exit_code})"
        tail = [l for l in v.lines if l.strip()][-3:]
        print(f"node {v.name}: {why}")
        if not v.verdict and tail and not (v.stopped_by_us and cl.first_fail):
            for l in tail:
                print(f"    | {l}")

    print()
    pmd = sum(len(v.pmd_ports) for v in cl.vms)
    drivers = sorted(set(d for v in cl.vms for _, d in v.pmd_ports))
    iova = sorted(set(v.iova for v in cl.vms if v.iova))
    kern = sum(len(v.kernel_ports) for v in cl.vms)
    if pmd or any(v.bypass_ports for v in cl.vms):
        print(f"network: uio, kernel bypassed: {sum(len(v.bypass_ports) for v in cl.vms)} of {nics} NICs bound to "
              f"uio_pci_generic, {pmd} probed by DPDK {'/'.join(drivers) or '(none)'} (EAL), "
              f"IOVA {'/'.join(iova) or '?'}")
    if kern:
        print(f"network: kernel fallback (no bypass): {kern} of {nics} NICs are virtio_net interfaces used through "
              f"{'io_uring AF_PACKET sockets' if a.kdrv == 'uring' else 'DPDK net_af_packet'}")
    links_summary(cl)
    verdicts = [v.t_verdict for v in cl.vms if v.t_verdict is not None]
    first_init = min((v.t_pid1 for v in cl.vms if v.t_pid1), default=None)
    if verdicts and len(verdicts) == n:
        print(f"boot-to-verdict: {cl.elapsed(max(verdicts)):.1f} s from launch to the last verdict "
              f"(first /init at {cl.elapsed(first_init):.1f} s, last at "
              f"{cl.elapsed(max(v.t_pid1 for v in cl.vms if v.t_pid1)):.1f} s)")
    passed = n - len(failed)
    ok = not failed and not timed_out
    dims = "x".join(map(str, cl.dims))
    if timed_out:
        slow = [v.name for v in cl.vms if v.t_pid1 is None and "/init within" in v.reason]
        what = (f"VM {', '.join(slow)} did not reach /init within {a.boot_timeout:.0f} s (--boot-timeout)" if slow
                else f"timed out after {a.timeout:.0f} s (--timeout)")
        print(f"qemu: FAIL: {what} with {len(verdicts)} of {n} verdicts; consoles in {os.path.relpath(a.log_dir)}")
    print(f"qemu: {'PASS' if ok else 'FAIL'}: {passed} of {n} nodes passed (dims {dims}, job {a.job}, net {a.net}, "
          f"accel {a.accel}) in {cl.elapsed(max(verdicts)) if verdicts else cl.elapsed():.1f} s", flush=True)
    return 0 if ok else 1


def links_summary(cl):
    """What the link layer did to keep the links up, from each node's "links"
    line: a vCPU the host stalls shows as keepalive probes, retransmissions
    and a long silence broken before the down deadline, not as a dead link."""
    rows = [(v, v.links) for v in cl.vms if v.links]
    if not rows:
        return

    def total(key):
        return sum(int(kv.get(key, "0") or 0) for _, kv in rows)

    worst, kv = max(rows, key=lambda r: int(r[1].get("longest_silence_ms", "0") or 0))
    limit = f" (a link goes down after {cl.a.link_timeout * 1000:.0f} ms)" if cl.a.link_timeout else ""
    print(f"links: {total('retransmits')} retransmissions, {total('timeouts')} retransmission timeouts, "
          f"{total('keepalives')} keepalive probes, {total('duplicates')} duplicates, "
          f"{total('trainings')} trainings over {len(rows)} nodes; longest silence a neighbour broke: "
          f"{kv.get('longest_silence_ms', '?')} ms at node {worst.name}{limit}")
