/* ntt_bls12_381_test.c - NTT tests for bls12_381 (see ntt_test_body.h). Exit status non-zero on failure. */
#include "curves/bls12_381.h"
#include "ntt/ntt_test_body.h"

int main(void)
{
    return ntt_test_main();
}
