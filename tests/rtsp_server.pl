#!/usr/bin/perl
# rtsp_server.pl — the RTSP server of tests/cli_live_rtsp.sh: GStreamer's
# gst-rtsp-server (Debian's gir1.2-gst-rtsp-server-1.0, through Perl's
# Glib::Object::Introspection) serving rtsp://127.0.0.1:PORT/live, a live
# 160x120 25 fps H.264 test pattern (a keyframe every second), to clients
# over TRANSPORT only: tcp (RTP interleaved in the RTSP connection) or udp.
# Prints "ready" once it listens; runs until killed.
#   perl tests/rtsp_server.pl PORT tcp|udp
use strict;
use warnings;
use Glib::Object::Introspection;

Glib::Object::Introspection->setup(basename => 'Gst', version => '1.0', package => 'Gst');
Glib::Object::Introspection->setup(basename => 'GstRtspServer', version => '1.0', package => 'GstRtspServer');

my ($port, $transport) = @ARGV;
die "usage: rtsp_server.pl PORT tcp|udp\n" unless defined $transport && $transport =~ /^(tcp|udp)$/;
$| = 1;
Gst::init([]);
my $server = GstRtspServer::RTSPServer->new;
$server->set_address('127.0.0.1');
$server->set_service($port);
my $factory = GstRtspServer::RTSPMediaFactory->new;
$factory->set_launch('( videotestsrc is-live=true ! video/x-raw,width=160,height=120,framerate=25/1 ! '
    . 'x264enc tune=zerolatency speed-preset=ultrafast key-int-max=25 bframes=0 rc-lookahead=0 sync-lookahead=0 sliced-threads=false threads=1 ! rtph264pay name=pay0 pt=96 )');
$factory->set_shared(1);
$factory->set_protocols([$transport]);
$server->get_mount_points->add_factory('/live', $factory);
$server->attach(undef) or die "rtsp_server.pl: cannot listen on port $port\n";
print "ready\n";
Glib::MainLoop->new->run;
