/* ntt_bn254_test.c - NTT tests for bn254 (see ntt_test_body.h). Exit status non-zero on failure. */
#include "curves/bn254.h"
#include "ntt/ntt_test_body.h"

int main(void)
{
    return ntt_test_main();
}
