"""Bad input, all of it: every option of --help with malformed values
(empty, negative, huge, non-numeric, unknown units, given twice, in
conflict). Each must give exactly one line on stderr naming the problem,
the usage exit status (2; 1 for what only the machine can refuse, 127 for a
command that cannot be run), nothing on stdout, no libbpf text, no crash.
The table must have a row for every option --help lists, so an option
added without rows fails here. Runs under the sanitized build too (make
sanitized), where a crash or leak in the parser is a failure."""

import re
import subprocess

from harness import TOOL
from harness import test
from harness import run_process

# (options the row exercises, argv, exit status, text the one line must hold)
ROWS = [
    (["-T"], ["-T", ""], 2, "unknown layer ''"),
    (["-T"], ["-T", "syscall,"], 2, "unknown layer ''"),
    (["-T"], ["-T", "SYSCALL"], 2, "unknown layer 'SYSCALL'"),
    (["-T"], ["-T", "x" * 5000], 2, "unknown layer"),
    # Faults have no tracepoints: fentry or kprobes only.
    (["-T"], ["-T", "fault", "--attach=tracepoint"], 1, "fault has no tracepoint source"),
    (["-p"], ["-p", ""], 2, "invalid PID ''"),
    (["-p"], ["-p", "-1"], 2, "invalid PID '-1'"),
    (["-p"], ["-p", "1,,2"], 2, "invalid PID ''"),
    (["-p"], ["-p", "99999999999999999999"], 2, "invalid PID"),
    (["-p"], ["-p", "12k"], 2, "invalid PID '12k'"),
    (["-p"], ["-p", ",".join(["7"] * 17)], 2, "at most 16"),
    (["-f", "--children"], ["-f"], 2, "add -p"),
    (["-f", "--children"], ["--children=1"], 2, "'--children=1'"),
    (["--no-children"], ["--no-children"], 2, "applies to a -- COMMAND"),
    (["-t"], ["-t", ""], 2, "invalid TID ''"),
    (["-t"], ["-t", "0"], 2, "invalid TID '0'"),
    (["-t"], ["-t", "-5"], 2, "invalid TID '-5'"),
    (["-t"], ["-t", "4294967296"], 2, "invalid TID"),
    (["-t"], ["-t", "1e3"], 2, "invalid TID '1e3'"),
    (["-t"], ["-t", "1", "-t", "2"], 2, "-t given twice"),
    (["-c"], ["-c", ""], 2, "invalid name ''"),
    (["-c"], ["-c", "x" * 16], 2, "1 to 15 characters"),
    (["-c"], ["-c", "a", "-c", "b"], 2, "-c given twice"),
    (["--cgroup"], ["--cgroup="], 2, "empty --cgroup"),
    (["--cgroup"], ["--cgroup=/nonexistent/group"], 1, "cannot open cgroup /nonexistent/group"),
    (["--cgroup"], ["--cgroup=/proc"], 1, "not a cgroup v2 directory"),
    (["--cgroup"], ["--cgroup=/a", "--cgroup=/b"], 2, "--cgroup given twice"),
    (["-d"], ["-d", ""], 2, "invalid disk ''"),
    (["-d"], ["-d", "/dev/sda"], 2, "invalid disk '/dev/sda'"),
    (["-d"], ["-d", "../sda"], 2, "invalid disk"),
    (["-d"], ["-d", "nosuchdisk9"], 1, "no disk named 'nosuchdisk9'"),
    (["-d"], ["-d", "x", "-d", "y"], 2, "-d given twice"),
    (["-d"], ["-T", "syscall", "-d", "vda"], 2, "-d applies to the bio and blk layers"),
    (["-Q", "--queued"], ["-Q=1"], 2, "'-Q=1'"),
    (["-Q", "--queued"], ["-T", "syscall", "-Q"], 2, "-Q applies to the blk layer"),
    (["-D", "--per-disk"], ["-T", "syscall", "-D"], 2, "-D applies to the bio and blk layers"),
    (["-P", "--per-process"], ["--per-process=yes"], 2, "'--per-process=yes'"),
    (["-G", "--per-cgroup"], ["--per-cgroup=yes"], 2, "'--per-cgroup=yes'"),
    (["--cgroup-grace"], ["-G", "--prometheus=9633", "--cgroup-grace=0"], 2,
     "invalid --cgroup-grace '0'"),
    (["--cgroup-grace"], ["-G", "--prometheus=9633", "--cgroup-grace="], 2,
     "invalid --cgroup-grace ''"),
    (["--cgroup-grace"], ["-G", "--cgroup-grace=10"], 2, "add -G and --prometheus"),
    (["--cgroup-grace"], ["--textfile=/tmp", "--cgroup-grace=10"], 2, "add -G"),
    (["--cgroup-grace"], ["-G", "--prometheus=9633", "--cgroup-grace=1",
                          "--cgroup-grace=2"], 2, "--cgroup-grace given twice"),
    (["-F", "--flags"], ["-T", "vfs", "-F"], 2, "-F applies to the blk layer"),
    (["--top"], ["--top="], 2, "invalid --top ''"),
    (["--top"], ["-P", "--top=0"], 2, "invalid --top '0'"),
    (["--top"], ["-P", "--top=-3"], 2, "invalid --top '-3'"),
    (["--top"], ["-P", "--top=5k"], 2, "invalid --top '5k'"),
    (["--top"], ["-P", "--top=99999999999999999999"], 2, "invalid --top"),
    (["--top"], ["--top=5"], 2, "add one of them"),
    (["--top"], ["-P", "--top=5", "--top=6"], 2, "--top given twice"),
    (["--max-keys"], ["-P", "--max-keys="], 2, "invalid --max-keys ''"),
    (["--max-keys"], ["-P", "--max-keys=0"], 2, "invalid --max-keys '0'"),
    (["--max-keys"], ["-P", "--max-keys=1k"], 2, "invalid --max-keys '1k'"),
    (["--max-keys"], ["-P", "--max-keys=99999999999"], 2, "from 1 to 1048576"),
    (["--max-keys"], ["--max-keys=10"], 2, "add one of them"),
    (["-m", "--milliseconds"], ["-m", "-u"], 2, "exclude each other"),
    (["-u", "--microseconds"], ["-u", "-m"], 2, "exclude each other"),
    (["--json"], ["--json=1"], 2, "'--json=1'"),
    (["--stats"], ["--stats=yes"], 2, "'--stats=yes'"),
    (["--timestamp"], ["--timestamp=now"], 2, "'--timestamp=now'"),
    (["--duration"], ["--duration="], 2, "invalid --duration ''"),
    (["--duration"], ["--duration=0"], 2, "invalid --duration '0'"),
    (["--duration"], ["--duration=-1"], 2, "invalid --duration '-1'"),
    (["--duration"], ["--duration=1.5"], 2, "invalid --duration '1.5'"),
    (["--duration"], ["--duration=10ms"], 2, "invalid --duration '10ms'"),
    (["--duration"], ["--duration=99999999999999"], 2, "invalid --duration"),
    (["--duration"], ["--duration=1", "--duration=2"], 2, "--duration given twice"),
    (["--duration"], ["--duration=1", "--", "true"], 2, "does not go with a command"),
    (["--attach"], ["--attach="], 2, "unknown attach method ''"),
    (["--attach"], ["--attach=FENTRY"], 2, "unknown attach method 'FENTRY'"),
    (["--attach"], ["--attach=raw", "--attach=kprobe"], 2, "--attach given twice"),
    (["--plan"], ["--plan", "5"], 2, "takes no interval"),
    (["--plan"], ["--plan=1"], 2, "'--plan=1'"),
    (["--check"], ["--check"], 2, "--check goes with --plan"),
    (["--check"], ["-T", "blk", "--check", "1"], 2, "--check goes with --plan"),
    (["-v", "--verbose"], ["-v=1"], 2, "'-v=1'"),
    (["-B", "--part-histograms"], ["--no-parts", "-B"], 2, "drop --no-parts"),
    (["--no-offcpu"], ["--no-offcpu", "--no-parts"], 2, "drop --no-parts"),
    (["--no-parts"], ["--no-parts=1"], 2, "'--no-parts=1'"),
    (["--no-writeback"], ["--no-writeback=1"], 2, "'--no-writeback=1'"),
    (["--no-writeback"], ["-T", "syscall", "--no-writeback"], 2,
     "--no-writeback applies to the blk layer only"),
    (["--all-fds"], ["--all-fds=yes"], 2, "'--all-fds=yes'"),
    (["--prometheus"], ["--prometheus="], 2, "invalid port ''"),
    (["--prometheus"], ["--prometheus=0"], 2, "invalid port '0'"),
    (["--prometheus"], ["--prometheus=-1"], 2, "invalid port '-1'"),
    (["--prometheus"], ["--prometheus=70000"], 2, "invalid port '70000'"),
    (["--prometheus"], ["--prometheus=1:2:3"], 2, "brackets"),
    (["--prometheus"], ["--prometheus=localhost:9633"], 2, "numeric address"),
    (["--prometheus"], ["--prometheus=9633", "--prometheus=9634"], 2,
     "--prometheus given twice"),
    (["--prometheus"], ["--prometheus=9633", "--json"], 2, "drop --json"),
    (["--prometheus"], ["--prometheus=9633", "5"], 2, "no interval"),
    (["--prometheus"], ["--prometheus=9633", "-u"], 2, "drop them"),
    (["--textfile"], ["--textfile="], 2, "empty --textfile"),
    (["--textfile"], ["--textfile=/nonexistent/dir"], 1, "/nonexistent/dir"),
    (["--textfile"], ["--textfile=/tmp", "--textfile=/var/tmp"], 2,
     "--textfile given twice"),
    (["--textfile"], ["--textfile=/tmp", "10", "3"], 2, "no count"),
    (["-o", "--output"], ["-o", ""], 2, "empty -o"),
    (["-o", "--output"], ["-o", "a", "-o", "b"], 2, "given twice"),
    (["-o", "--output"], ["-o", "r.txt", "--prometheus=9999"], 2, "drop -o"),
    (["-o", "--output"], ["-o", "r.txt", "--live"], 2, "drop -o"),
    (["-o", "--output"], ["--output=/nonexistent-dir/r.txt", "1"], 1, "/nonexistent-dir/r.txt"),
    (["--no-verdict"], ["--no-verdict=1"], 2, "'--no-verdict=1'"),
    (["--heatmap"], ["--heatmap="], 2, "empty --heatmap"),
    (["--heatmap"], ["--heatmap=io.svg"], 2, "give an interval"),
    (["--heatmap"], ["--heatmap=io.svg", "--plan"], 2, "draws no --heatmap"),
    (["--heatmap"], ["--heatmap=io.svg", "--prometheus=9999"], 2, "drop --heatmap"),
    (["--heatmap"], ["--heatmap=/nonexistent-dir/io.svg", "1"], 1,
     "cannot write the heat map to /nonexistent-dir/io.svg"),
    (["--live"], ["--live", "--json"], 2, "--live owns the terminal"),
    (["--live"], ["--live", "--", "true"], 2, "--live owns the terminal"),
    (["--live"], ["--live"], 1, "--live draws on a terminal"),
    (["--slower"], ["--slower="], 2, "invalid --slower ''"),
    (["--slower"], ["--slower=10"], 2, "with its unit"),
    (["--slower"], ["--slower=-1ms"], 2, "invalid --slower '-1ms'"),
    (["--slower"], ["--slower=1h"], 2, "invalid --slower '1h'"),
    (["--slower"], ["--slower=99999999999s"], 2, "invalid --slower"),
    (["--slower"], ["--slower=1ms", "--slower=2ms"], 2, "--slower given twice"),
    (["--slower"], ["-T", "blk", "--slower=1ms"], 2, "add a layer of calls"),
    (["--slower"], ["--prometheus=9633", "--slower=1ms"], 2, "--slower and --trace"),
    (["--full-path"], ["--full-path"], 2, "add --slower or --trace"),
    (["--file"], ["--file="], 2, "empty --file"),
    (["--file"], ["--file=/nonexistent/f"], 1, "cannot trace --file '/nonexistent/f'"),
    (["--file"], ["--file=/tmp"], 1, "is a directory"),
    (["--file"], ["-T", "blk", "--file=/etc/hostname"], 2, "layer with files"),
    (["--file"], ["--file=/a"] * 9, 2, "at most 8"),
    (["--trace"], ["--trace="], 2, "empty --trace"),
    (["--trace"], ["--trace=/nonexistent/dir/t.json"], 1, "cannot write the trace"),
    (["--trace"], ["--trace=a", "--trace=b"], 2, "--trace given twice"),
    (["--trace"], ["--textfile=/tmp", "--trace=t.json"], 2, "--slower and --trace"),
    (["--record"], ["--record="], 2, "empty --record"),
    (["--record"], ["-T", "syscall", "--record=a", "--record=b"], 2, "--record given twice"),
    (["--record"], ["--record=r.rec"], 2, "give -T one layer of calls"),
    (["--record"], ["-T", "syscall,vfs", "--record=r.rec"], 2, "give -T one layer of calls"),
    (["--record"], ["-T", "io_uring", "--record=r.rec"], 2, "give -T one layer of calls"),
    (["--record"], ["-T", "syscall", "-G", "--record=r.rec"], 2, "not what -F, -G"),
    (["--record"], ["-T", "syscall", "--prometheus=9633", "--record=r.rec"], 2,
     "not with --plan or an exporter"),
    (["--record"], ["-T", "syscall,blk", "--record=/nonexistent/dir/r.rec"], 1,
     "cannot create the recording /nonexistent/dir/r.rec"),
    (["--ring"], ["--ring=5"], 2, "add --record=FILE"),
    (["--ring"], ["-T", "syscall", "--record=r.rec", "--ring=0"], 2, "invalid --ring '0'"),
    (["--ring"], ["-T", "syscall", "--record=r.rec", "--ring=x"], 2, "invalid --ring 'x'"),
    (["--ring"], ["-T", "syscall", "--record=r.rec", "--ring=86401"], 2,
     "invalid --ring '86401'"),
    (["--ring"], ["-T", "syscall", "--record=r.rec", "--ring=1", "--ring=2"], 2,
     "--ring given twice"),
    (["--ring"], ["report", "r.rec", "--ring=3"], 2, "report reads a recording: no"),
    # iostackbreak report FILE: the options that trace rather than view.
    (["--record"], ["report"], 2, "report reads a recording"),
    (["--record"], ["report", "-P"], 2, "report reads a recording"),
    (["--record"], ["report", "/nonexistent/r.rec"], 1, "cannot open the recording"),
    (["--record"], ["report", "r.rec", "-T", "blk"], 2, "are the recording's"),
    (["--record"], ["report", "r.rec", "5"], 2, "no interval"),
    (["--record"], ["report", "r.rec", "-G"], 2, "a recording keeps no"),
    (["--record"], ["report", "r.rec", "--record=x"], 2, "report reads a recording: no"),
    (["--record"], ["report", "r.rec", "--slower=x"], 2, "--slower"),
    (["--trace-max"], ["--trace-max=5"], 2, "add --trace"),
    (["--trace-max"], ["--trace=t.json", "--trace-max=0"], 2, "invalid --trace-max '0'"),
    (["--trace-max"], ["--trace=t.json", "--trace-max=x"], 2, "invalid --trace-max 'x'"),
    (["--btf"], ["--btf="], 2, "empty --btf"),
    (["--btf"], ["--btf=/nonexistent/vmlinux"], 1,
     "--btf /nonexistent/vmlinux: No such file or directory"),
    (["--btf"], ["--btf=/etc/passwd"], 1, "--btf /etc/passwd: not a BTF file"),
    (["--btf"], ["--btf=/"], 1, "--btf /: not a regular file"),
    (["--btf"], ["--btf=a", "--btf=b"], 2, "--btf given twice"),
    (["-h", "--help"], ["--help=1"], 2, "'--help=1'"),
    (["-V", "--version"], ["--version=1"], 2, "'--version=1'"),
    (["interval"], ["0"], 2, "invalid interval '0'"),
    (["interval"], ["-1"], 2, "'-1'"),
    (["interval"], ["1.5"], 2, "invalid interval '1.5'"),
    (["interval"], ["5s"], 2, "invalid interval '5s'"),
    (["interval"], ["99999999999999999999"], 2, "invalid interval"),
    (["count"], ["1", "0"], 2, "invalid count '0'"),
    (["count"], ["1", "x"], 2, "invalid count 'x'"),
    (["count"], ["1", "2", "3"], 2, "unexpected argument '3'"),
    (["--"], ["--"], 2, "nothing after --"),
    (["--"], ["--", ""], 127, "cannot run ''"),
    (["--"], ["--", "/nonexistent/cmd"], 127, "cannot run /nonexistent/cmd"),
    (["--"], ["--", "no-such-command-iosb"], 127, "no such command in PATH"),
    (["--"], ["--", "/etc/passwd"], 127, "not an executable file"),
    (["--"], ["-p", "1", "--", "true"], 2, "exclude each other"),
    # The long spellings go through the same checks.
    (["--type"], ["--type=nope"], 2, "unknown layer 'nope'"),
    (["--pid"], ["--pid=x"], 2, "invalid PID 'x'"),
    (["--tid"], ["--tid=-2"], 2, "invalid TID '-2'"),
    (["--comm"], ["--comm="], 2, "invalid name ''"),
    (["--disk"], ["--disk=a/b"], 2, "invalid disk 'a/b'"),
    (["--pattern"], ["--pattern=1"], 2, "'--pattern=1'"),
    (["-K", "--kernel-stack"], ["--kernel-stack=1"], 2, "'--kernel-stack=1'"),
    (["-K", "--kernel-stack"], ["-K", "1"], 2, "report stacks once, at the end of the run"),
    (["-U", "--user-stack"], ["--user-stack=1"], 2, "invalid --user-stack '1'"),
    (["-U", "--user-stack"], ["--user-stack="], 2, "invalid --user-stack ''"),
    (["-U", "--user-stack"], ["--user-stack=fp", "--user-stack=dwarf"], 2,
     "--user-stack given twice, 'dwarf' and 'fp'"),
    (["--user-stack-size"], ["-U", "--user-stack-size=255"], 2,
     "invalid --user-stack-size '255'"),
    (["--user-stack-size"], ["-U", "--user-stack-size=8193"], 2,
     "invalid --user-stack-size '8193'"),
    (["--user-stack-size"], ["-U", "--user-stack-size=x"], 2, "invalid --user-stack-size 'x'"),
    (["--user-stack-size"], ["--user-stack=fp", "--user-stack-size=4096"], 2,
     "--user-stack-size sizes the stack copied"),
    (["--user-stack-size"], ["-K", "--user-stack-size=4096"], 2,
     "--user-stack-size sizes the stack copied"),
    (["-U", "--user-stack"], ["-U", "--live"], 2, "report stacks once, at the end of the run"),
    (["--io"], ["-K", "--io=x"], 2, "invalid --io 'x'"),
    (["--io"], ["-K", "--io="], 2, "invalid --io ''"),
    (["--io"], ["-K", "--io=r", "--io=w"], 2, "--io given twice"),
    (["--io"], ["-T", "syscall", "--io=r"], 2, "add -K, -U or both"),
    (["--weight"], ["-K", "--weight=x"], 2, "invalid --weight 'x'"),
    (["--weight"], ["-K", "--weight=time", "--weight=bytes"], 2, "--weight given twice"),
    (["--weight"], ["--weight=bytes"], 2, "add -K, -U or both"),
    (["--max-stacks"], ["-K", "--max-stacks=0"], 2, "invalid --max-stacks '0'"),
    (["--max-stacks"], ["-K", "--max-stacks=x"], 2, "invalid --max-stacks 'x'"),
    (["--folded"], ["-K", "--folded="], 2, "empty --folded="),
    (["--folded"], ["--folded", "-T", "syscall"], 2, "add -K, -U or both"),
    (["--flamegraph"], ["-K", "--flamegraph="], 2, "empty --flamegraph"),
    (["--flamegraph"], ["-K", "--flamegraph=a", "--flamegraph=b"], 2, "--flamegraph given twice"),
    # Control characters in what we quote back are escaped: still one line.
    (["-T"], ["-T", "sys\ncall"], 2, "unknown layer 'sys\\ncall'"),
    (["--cgroup"], ["--cgroup=/no\nsuch"], 1, "cannot open cgroup /no\\nsuch"),
    (["-d"], ["-d", "sd\x1b[31ma"], 1, "no disk named 'sd\\x1b[31ma'"),
    ([], ["-Z"], 2, "'-Z'"),
    ([], ["--no-such-option"], 2, "'--no-such-option'"),
]


def help_options():
    """Every option --help lists, short and long, and the positionals."""
    p = run_process([TOOL, "--help"], capture_output=True, text=True, timeout=10)
    assert p.returncode == 0, p.stderr
    opts = set()
    for line in p.stdout.splitlines():
        m = re.match(r"\s+(?:(-\w), )?(--[\w-]+)", line)
        if m:
            opts.update(o for o in m.groups() if o)
    assert "--json" in opts and "-T" in opts, opts
    return opts | {"interval", "count", "--"}


@test
def every_option_has_bad_input_rows():
    covered = {o for names, *_ in ROWS for o in names}
    missing = sorted(help_options() - covered)
    assert not missing, f"options in --help with no bad-input row: {missing}"


@test
def bad_input_of_every_option_gives_one_clear_line():
    failures = []
    for names, argv, code, needle in ROWS:
        p = run_process([TOOL, *argv], capture_output=True, text=True, timeout=30)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        why = []
        if p.returncode != code:
            why.append(f"exit {p.returncode}, want {code}")
        if len(lines) != 1:
            why.append(f"{len(lines)} lines on stderr")
        elif not lines[0].startswith("iostackbreak: ") or needle not in lines[0]:
            why.append(f"line does not hold {needle!r}")
        if "libbpf" in p.stderr:
            why.append("libbpf text")
        if p.stdout:
            why.append("output on stdout")
        if why:
            failures.append(f"{argv!r}: {', '.join(why)}: {p.stderr.strip()[:300]!r}")
    assert not failures, "\n".join(failures)
    print(f"    {len(ROWS)} malformed command lines, each one clear line", flush=True)
