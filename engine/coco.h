/* coco.h — COCO's class names (Ultralytics' order). */
#ifndef STRIX_COCO_H
#define STRIX_COCO_H

#define STRIX_COCO_CLASSES 80
extern const char *const strix_coco_names[STRIX_COCO_CLASSES];

#endif
