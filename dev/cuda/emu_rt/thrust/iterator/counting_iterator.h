/* thrust/iterator/counting_iterator.h (emulated) - the one thrust iterator src/gpu/msm.cuh uses */
#pragma once
#include <stddef.h>
namespace thrust {
template <class T>
struct counting_iterator {
    T base;
    explicit counting_iterator(T b) : base(b) {}
    T operator[](size_t i) const { return base + (T)i; }
};
} // namespace thrust
