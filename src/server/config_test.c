/* config_test.c - the option table's parsers (config.c): the worker counts that take `auto`
 * (--synth-workers, --finalizers: 0 stands for auto, resolved by the engine) default to it,
 * accept it and numbers in their range from the command line and from a config file, and
 * refuse anything else naming the option; a plain count (--gpu-workers) still refuses `auto`.
 * The oracle is the documented behaviour (docs/DAEMON.md's options table). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/config.h"
#include "util/check.h"

static void test_auto_counts(void)
{
    serve_config c;
    char err[CUZK_ERRLEN];
    serve_config_defaults(&c);
    CHECK(c.synth_workers == 0 && c.finalizers == 0, "defaults: synth %d, finalizers %d (0 = auto)",
          c.synth_workers, c.finalizers);
    CHECK(c.gpu_workers == 2 && c.queue_depth == 4, "other counts unchanged: %d, %d", c.gpu_workers, c.queue_depth);

    CHECK(serve_config_set(&c, "finalizers", "3", err) == CUZK_OK && c.finalizers == 3, "--finalizers 3: %d",
          c.finalizers);
    CHECK(serve_config_set(&c, "finalizers", "auto", err) == CUZK_OK && c.finalizers == 0, "--finalizers auto: %d",
          c.finalizers);
    CHECK(serve_config_set(&c, "synth-workers", "12", err) == CUZK_OK && c.synth_workers == 12,
          "--synth-workers 12: %d", c.synth_workers);

    static const char *const bad[] = {"0", "-1", "257", "lots", "", "Auto", "2x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        cuzk_err e = serve_config_set(&c, "finalizers", bad[i], err);
        CHECK(e == CUZK_EINVAL && strstr(err, "--finalizers"), "--finalizers '%s' refused: %s", bad[i], err);
        CHECK(c.finalizers == 0, "--finalizers '%s' left the value alone: %d", bad[i], c.finalizers);
    }
    CHECK(serve_config_set(&c, "gpu-workers", "auto", err) == CUZK_EINVAL, "--gpu-workers auto is refused");

    /* from a config file, and the command line over it */
    char path[] = "/tmp/cuzk-config-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    if (fd < 0)
        return;
    FILE *f = fdopen(fd, "w");
    fputs("finalizers = 4\nsynth-workers auto\n", f);
    fclose(f);
    char a0[] = "serve", a1[] = "--config", a3[] = "--finalizers=auto";
    char *argv[] = {a0, a1, path, a3};
    int help = 0;
    serve_config_defaults(&c);
    c.synth_workers = 9;
    CHECK(serve_config_from_args(&c, 4, argv, &help, err) == CUZK_OK, "args: %s", err);
    CHECK(c.synth_workers == 0 && c.finalizers == 0, "file then command line: synth %d, finalizers %d",
          c.synth_workers, c.finalizers);
    CHECK(serve_config_from_args(&c, 3, argv, &help, err) == CUZK_OK && c.finalizers == 4,
          "file alone: finalizers %d", c.finalizers);
    unlink(path);
}

int main(void)
{
    test_auto_counts();
    printf("config_test: %d checks, %d failures\n", checks, failures);
    return failures != 0;
}
