/* fatbin_section.c — a ".nv_fatbin" section, as nvcc leaves in a program with device code. Linked
 * into a test program that maps no libcudart, it makes the program one with a static cudart as
 * gputrace recognizes it at load (cupti_init: gt_cupti_exe_has_fatbin). */
__attribute__((used, section(".nv_fatbin"))) static const char fatbin[8] = "fatbin";
