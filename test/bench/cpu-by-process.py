"""Every second: how busy the machine is (% of one core, so 200% on two cores) and the CPU of
sqld, the app servers (dist/server.js), the floor, the bench itself and everything else, read
from /proc. Run it beside a bench to see who holds the cores in a window:

    python3 test/bench/cpu-by-process.py > /tmp/samples.txt &
    npm run bench -- --scenarios=sqld --cap=0.1
    kill %1

(test/bench/README.md, "Writes, sqld and scale-out" › Goals, goal 4, was read this way.)
"""

import os
import time

HZ = os.sysconf("SC_CLK_TCK")


def processes():
    found = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = open(f"/proc/{pid}/stat").read()
            command = open(f"/proc/{pid}/cmdline").read().replace("\0", " ")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        found[pid] = (int(fields[11]) + int(fields[12]), command)  # utime + stime
    return found


def group(command):
    if "sqld" in command and "--db-path" in command:
        return "sqld"
    if "dist/server.js" in command:
        return "server"
    if "floor-server" in command:
        return "floor"
    if "bench" in command or "tsx" in command:
        return "bench"
    return "other"


def machine():
    values = list(map(int, open("/proc/stat").readline().split()[1:]))
    return sum(values), values[3] + values[4]  # all, idle + iowait


def main():
    cores = os.cpu_count() or 1
    before, (total0, idle0) = processes(), machine()
    while True:
        time.sleep(1)
        now, (total, idle) = processes(), machine()
        ticks = {}
        for pid, (used, command) in now.items():
            if pid in before:
                name = group(command)
                ticks[name] = ticks.get(name, 0) + used - before[pid][0]
        busy = 100 * cores * (1 - (idle - idle0) / max(1, total - total0))
        shares = " ".join(f"{name} {100 * t / HZ:4.0f}%" for name, t in sorted(ticks.items()))
        print(time.strftime("%H:%M:%S"), f"busy {busy:5.0f}%", shares, flush=True)
        before, total0, idle0 = now, total, idle


if __name__ == "__main__":
    main()
