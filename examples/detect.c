/* detect.c — the smallest strix program: one image in, its boxes printed.
 *
 *   cc detect.c -o detect $(pkg-config --cflags --libs strix)
 *   ./detect yolov8n.pt dog.jpg                    # an Ultralytics checkpoint
 *   ./detect yolov8n.safetensors dog.jpg yolov8.yaml n   # weights + model YAML + scale
 *
 * Prints one line per detection, best first: class id, score, the box
 * corners x1 y1 x2 y2 in the image's pixels, and the class name. */
#include <stdio.h>
#include <stdlib.h>

#include <strix/strix.h>

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 5) {
        fprintf(stderr, "usage: %s WEIGHTS IMAGE [MODEL.yaml SCALE]\n", argv[0]);
        return 2;
    }
    strix_error err;
    strix_model_options mo;
    strix_model_options_init(&mo);
    mo.weights_path = argv[1];
    if (argc == 5) {
        mo.yaml_path = argv[3];
        mo.scale = argv[4][0];
    }
    strix_model *model;
    if (strix_model_load(&model, &mo, &err) != STRIX_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }

    strix_owned_image img;
    if (strix_image_load(argv[2], 0, &img, &err) != STRIX_OK) {
        fprintf(stderr, "%s\n", err.message);
        strix_model_free(model);
        return 1;
    }
    strix_image view = strix_image_view(&img);
    strix_detect_options opt;
    strix_detect_options_init(&opt); /* Ultralytics' defaults: conf 0.25, iou 0.7, imgsz 640 */
    strix_detections dets;
    int rc = 0;
    if (strix_model_detect(model, &view, 1, &opt, &dets, &err) != STRIX_OK) {
        fprintf(stderr, "%s\n", err.message);
        rc = 1;
    } else {
        for (int i = 0; i < dets.count; i++) {
            const strix_detection *d = &dets.items[i];
            printf("%d %.4f %.2f %.2f %.2f %.2f %s\n", d->class_id, d->score, d->x1, d->y1, d->x2, d->y2,
                   strix_model_class_name(model, d->class_id));
        }
    }
    strix_image_free(&img);
    strix_model_free(model);
    return rc;
}
