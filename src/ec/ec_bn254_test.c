/* ec_bn254_test.c - G1/G2 and pairing tests for bn254 (laws here; oracle via --dump FILE,
 * see tests/t_arith.sh). Exit status is non-zero on any failure. */
#include "curves/bn254.h"
#include "ec/ec_test_body.h"

int main(int argc, char **argv)
{
    g1_laws(30);
    g2_laws(10);
    subgroup_checks();
    pairing_checks(2);
    if (argc == 3 && strcmp(argv[1], "--dump") == 0) {
        FILE *f = fopen(argv[2], "w");
        if (!f) {
            perror(argv[2]);
            return 2;
        }
        dump_curves(f, 20, 3);
        fclose(f);
    } else {
        bench_curves();
    }
    if (failures) {
        fprintf(stderr, "%s: %d curve checks failed\n", CURVE_NAME, failures);
        return 1;
    }
    printf("%s: curve and pairing checks passed\n", CURVE_NAME);
    return 0;
}
