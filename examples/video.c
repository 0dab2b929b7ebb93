/* video.c — a video through strix: FFmpeg decodes, strix detects in batches
 * submitted with strix_model_submit and collected with strix_batch_collect.
 *
 *   cc video.c -o video $(pkg-config --cflags --libs strix libavformat libavcodec libswscale libavutil)
 *   ./video yolov8n.pt clip.mp4
 *   ./video yolov8n.safetensors clip.mp4 yolov8.yaml n
 *
 * Prints one line per frame: its number and how many objects it holds. */
#include <stdio.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libswscale/swscale.h>
#include <strix/strix.h>

enum { BATCH = 4 }; /* frames per batch: more amortise the model's fixed costs */

/* Detect the n frames held in bgr[] and print their counts; frames so far in *done. */
static int detect_batch(strix_model *m, uint8_t *bgr[], int n, int w, int h, int *done)
{
    strix_image img[BATCH] = {0};
    for (int i = 0; i < n; i++)
        img[i] = (strix_image){.data = bgr[i], .width = w, .height = h, .format = STRIX_BGR};
    strix_detect_options opt;
    strix_detect_options_init(&opt);
    strix_batch *b;
    strix_detections dets[BATCH];
    strix_error err;
    if (strix_model_submit(m, img, n, &opt, &b, &err) != STRIX_OK) {
        fprintf(stderr, "%s\n", err.message);
        return -1;
    }
    /* A program with more to do (decode the next batch, write the last one)
     * does it here: on a GPU the batch runs meanwhile (cuda_async). */
    strix_status s = strix_batch_collect(b, dets, &err);
    for (int i = 0; s == STRIX_OK && i < n; i++) printf("frame %d: %d objects\n", ++*done, dets[i].count);
    if (s != STRIX_OK) fprintf(stderr, "%s\n", err.message);
    strix_batch_release(b);
    return s == STRIX_OK ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 5) {
        fprintf(stderr, "usage: %s WEIGHTS VIDEO [MODEL.yaml SCALE]\n", argv[0]);
        return 2;
    }
    strix_model_options mo;
    strix_model_options_init(&mo);
    mo.weights_path = argv[1];
    if (argc == 5) {
        mo.yaml_path = argv[3];
        mo.scale = argv[4][0];
    }
    strix_model *m;
    strix_error err;
    if (strix_model_load(&m, &mo, &err) != STRIX_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    AVFormatContext *fmt = NULL;
    if (avformat_open_input(&fmt, argv[2], NULL, NULL) < 0 || avformat_find_stream_info(fmt, NULL) < 0) {
        fprintf(stderr, "%s: cannot open the video\n", argv[2]);
        return 1;
    }
    const AVCodec *codec;
    int vs = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
    AVCodecContext *dec = vs >= 0 ? avcodec_alloc_context3(codec) : NULL;
    if (!dec || avcodec_parameters_to_context(dec, fmt->streams[vs]->codecpar) < 0 ||
        avcodec_open2(dec, codec, NULL) < 0) {
        fprintf(stderr, "%s: no video stream that FFmpeg decodes\n", argv[2]);
        return 1;
    }
    int w = dec->width, h = dec->height, n = 0, done = 0, rc = 0;
    struct SwsContext *sws = sws_getContext(w, h, dec->pix_fmt, w, h, AV_PIX_FMT_BGR24, SWS_BILINEAR, NULL, NULL, NULL);
    uint8_t *bgr[BATCH];
    for (int i = 0; i < BATCH; i++) bgr[i] = av_malloc((size_t)w * h * 3);
    AVPacket *pkt = av_packet_alloc();
    AVFrame *frame = av_frame_alloc();
    int eof = 0;
    while (!eof && rc == 0) {
        if (av_read_frame(fmt, pkt) < 0) eof = 1;
        if (eof || pkt->stream_index == vs) avcodec_send_packet(dec, eof ? NULL : pkt);
        av_packet_unref(pkt);
        while (rc == 0 && avcodec_receive_frame(dec, frame) == 0) {
            int stride = w * 3;
            sws_scale(sws, (const uint8_t *const *)frame->data, frame->linesize, 0, h, &bgr[n], &stride);
            if (++n == BATCH) rc = detect_batch(m, bgr, n, w, h, &done), n = 0;
        }
    }
    if (rc == 0 && n > 0) rc = detect_batch(m, bgr, n, w, h, &done);
    for (int i = 0; i < BATCH; i++) av_free(bgr[i]);
    av_frame_free(&frame);
    av_packet_free(&pkt);
    sws_freeContext(sws);
    avcodec_free_context(&dec);
    avformat_close_input(&fmt);
    strix_model_free(m);
    return rc ? 1 : 0;
}
