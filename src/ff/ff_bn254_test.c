/* ff_bn254_test.c - field arithmetic tests for bn254 (laws here; BigInt oracle via --dump FILE,
 * see tests/t_arith.sh). Exit status is non-zero on any failure. */
#include "curves/bn254.h"
#include "ff/ff_test_body.h"

int main(int argc, char **argv)
{
    test_prime_field(2000);
    test_tower(200);
    if (argc == 3 && strcmp(argv[1], "--dump") == 0) {
        FILE *f = fopen(argv[2], "w");
        if (!f) {
            perror(argv[2]);
            return 2;
        }
        dump_fields(f, 200);
        fclose(f);
    } else {
        bench_fields();
    }
    if (failures) {
        fprintf(stderr, "%s: %d field checks failed\n", CURVE_NAME, failures);
        return 1;
    }
    printf("%s: field checks passed\n", CURVE_NAME);
    return 0;
}
