/* main.c - the cuzk command: dispatches to the subcommands declared in cli.h. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} commands[] = {
    {"prove", cmd_prove, "prove circuit.zkey witness.wtns proof.json public.json"},
    {"verify", cmd_verify, "verify vk.json public.json proof.json"},
    {"zkey", cmd_zkey, "zkey export-vk circuit.zkey vk.json"},
    {"dev-circuit", cmd_dev_circuit, "dev-circuit --curve bn128|bls12381 --constraints N --out DIR"},
    {"serve", cmd_serve, "serve [--listen ADDR] [--data DIR] [--budget SIZE|auto] ..."},
    {"submit", cmd_submit, "submit --zkey FILE --witness FILE [...]"},
    {"await", cmd_await, "await ID --out DIR [--timeout SECONDS]"},
    {"status", cmd_status, "status [ID]"},
    {"cancel", cmd_cancel, "cancel ID"},
    {"top", cmd_top, "top (live view of a running daemon)"},
    {"journal", cmd_journal, "journal check|recover [--data DIR] (a damaged job journal)"},
};

static void usage(FILE *f)
{
    fprintf(f, "cuzk - Groth16 prover and proving daemon (BN254, BLS12-381; snarkjs/circom files)\n\n"
               "usage: cuzk <command> [options]   (cuzk <command> --help for details)\n\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  cuzk %s\n", commands[i].help);
    fprintf(f, "\nexit codes: 0 ok, 1 proof invalid or job failed, 2 usage, 3 input file error,\n"
               "            4 resource (GPU, memory), 5 server, 6 timeout, 70 internal\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "cuzk: unknown command '%s' (try cuzk --help)\n", argv[1]);
    return EXIT_USAGE;
}
