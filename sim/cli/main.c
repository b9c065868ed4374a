#include <stdio.h>
int main(void) { puts("gpusim"); return 0; }
