/*
 * runlog-exec UMASK PARENT -- PROGRAM [ARGS...]
 *
 * What `runlog __exec` does (see `through_trampoline` in process.rs), as a static program with
 * no C library: gives the command the user's umask, asks the kernel for SIGTERM when the runner
 * dies, checks the runner is still its parent, and execs PROGRAM (searched in the PATH of its
 * environment, as execvp does). Why not the runlog binary itself: every dynamically linked
 * glibc program starts by asking the CPU for its cache sizes (cpuid), which traps to the
 * hypervisor on a virtual machine; with `sh` after it, a no-op task paid that twice, and the
 * runner benchmark spent a third of its time there. This one asks nothing and links nothing.
 *
 * Built by cli/build.rs for x86_64 Linux only; elsewhere the runner uses `runlog __exec`.
 * UMASK is octal or `-` (leave it); PARENT is the runner's pid. Exit status 127 on any error,
 * with one line on stderr, like `runlog __exec`.
 */

#define SYS_write 1
#define SYS_execve 59
#define SYS_exit 60
#define SYS_umask 95
#define SYS_getppid 110
#define SYS_prctl 157
#define PR_SET_PDEATHSIG 1
#define SIGTERM 15
#define ENOENT 2
#define ENOTDIR 20
#define EACCES 13
#define PATH_MAX 4096

static long sys(long n, long a, long b, long c) {
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}

static long len(const char *s) {
    long n = 0;
    while (s[n]) n++;
    return n;
}

static void say(const char *s) { sys(SYS_write, 2, (long)s, len(s)); }

static void fail(const char *what, const char *why) {
    say("runlog: cannot start the command: ");
    if (what) {
        say(what);
        say(": ");
    }
    say(why);
    say("\n");
    sys(SYS_exit, 127, 0, 0);
    for (;;) {
    }
}

/* A number in `base`, or -1 if `s` is not one. */
static long number(const char *s, int base) {
    long v = 0;
    if (!*s) return -1;
    for (; *s; s++) {
        int d = *s - '0';
        if (d < 0 || d >= base || v > 0x7fffffffL) return -1;
        v = v * base + d;
    }
    return v;
}

static const char *why(long err) {
    switch (-err) {
    case ENOENT: return "No such file or directory";
    case EACCES: return "Permission denied";
    case ENOTDIR: return "Not a directory";
    default: return "it cannot be executed";
    }
}

static const char *path_of(char **envp) {
    for (; *envp; envp++) {
        const char *e = *envp;
        if (e[0] == 'P' && e[1] == 'A' && e[2] == 'T' && e[3] == 'H' && e[4] == '=') return e + 5;
    }
    return "/bin:/usr/bin"; /* execvp's default */
}

static void run(char **argv, char **envp) {
    const char *prog = argv[0];
    for (const char *p = prog; *p; p++) {
        if (*p == '/') fail(prog, why(sys(SYS_execve, (long)prog, (long)argv, (long)envp)));
    }
    char buf[PATH_MAX];
    long plen = len(prog), denied = 0, last = -ENOENT;
    const char *dir = path_of(envp);
    for (;;) {
        const char *end = dir;
        while (*end && *end != ':') end++;
        long dlen = end - dir;
        if (dlen + 1 + plen + 1 <= PATH_MAX) {
            long n = 0;
            if (dlen == 0) buf[n++] = '.';
            for (long i = 0; i < dlen; i++) buf[n++] = dir[i];
            buf[n++] = '/';
            for (long i = 0; i <= plen; i++) buf[n++] = prog[i];
            last = sys(SYS_execve, (long)buf, (long)argv, (long)envp);
            if (last == -EACCES) denied = 1;
            else if (last != -ENOENT && last != -ENOTDIR) fail(prog, why(last));
        }
        if (!*end) break;
        dir = end + 1;
    }
    fail(prog, why(denied ? -EACCES : last));
}

__attribute__((used)) void start(long *sp) {
    long argc = sp[0];
    char **argv = (char **)(sp + 1);
    char **envp = argv + argc + 1;
    const char *dashes = argc > 3 ? argv[3] : "";
    if (argc < 5 || dashes[0] != '-' || dashes[1] != '-' || dashes[2]) {
        fail(0, "usage: runlog-exec UMASK PARENT -- PROGRAM [ARGS]");
    }
    if (!(argv[1][0] == '-' && !argv[1][1])) {
        long mask = number(argv[1], 8);
        if (mask < 0) fail(0, "the umask is not octal");
        sys(SYS_umask, mask, 0, 0);
    }
    long parent = number(argv[2], 10);
    if (parent <= 0) fail(0, "the parent is not a pid");
    if (sys(SYS_prctl, PR_SET_PDEATHSIG, SIGTERM, 0) < 0) fail(0, "prctl(PR_SET_PDEATHSIG) failed");
    /* The runner may have died before prctl: then nothing would signal the command. */
    if (sys(SYS_getppid, 0, 0, 0) != parent) fail(0, "the runner exited");
    run(argv + 4, envp);
}

__asm__(".globl _start\n"
        "_start:\n"
        "  mov %rsp, %rdi\n"
        "  and $-16, %rsp\n"
        "  call start\n"
        "  hlt\n");
