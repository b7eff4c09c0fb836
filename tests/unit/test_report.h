/* test_report.h - the suites of the report runner (test_report*.c). */
#ifndef TL_TEST_REPORT_H
#define TL_TEST_REPORT_H

#include <check.h>

Suite *make_reader_suite(void);
Suite *make_model_suite(void);
Suite *make_lineage_suite(void);
Suite *make_json_suite(void);
Suite *make_symbolize_suite(void);
Suite *make_report_suite(void);
Suite *make_check_suite(void);
Suite *make_progress_suite(void);
Suite *make_compress_suite(void);
Suite *make_zmodel_suite(void);
Suite *make_delta_suite(void);

#endif
