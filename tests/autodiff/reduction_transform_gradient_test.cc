#include <gtest/gtest.h>

#include "tests/autodiff/gradient_check.h"
