/* tracker_yaml.h — Ultralytics' tracker YAMLs (botsort.yaml, bytetrack.yaml,
 * ocsort.yaml, fasttrack.yaml, deepocsort.yaml, or a user's copy of one)
 * read into strix_track_options. */
#ifndef STRIX_TRACKER_YAML_H
#define STRIX_TRACKER_YAML_H

#include "strix.h"

/* Every key those five define is read;
 * tracker_type is required and picks the defaults of the keys the file
 * leaves out.  An unknown key, a value of the wrong type, a tracker or GMC
 * method strix lacks (orb, sift, ecc) or with_reid: True with a model other
 * than auto (a separate ReID model) is an error naming the file and line: STRIX_E_ARG (STRIX_E_UNSUPPORTED for what strix
 * lacks), STRIX_E_IO when the file cannot be read.  One key is strix's own,
 * not Ultralytics': gmc_grey, opencv5 (the default) or opencv4, the grey
 * frame BoT-SORT's GMC follows (strix_grey_rounding). */
strix_status strix_tracker_yaml_read(const char *path, strix_track_options *o, strix_error *err);

#endif
