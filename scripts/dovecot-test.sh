#!/bin/sh
# Installs Dovecot's IMAP server for the mailbox integration tests. The tests
# start their own instance on a free loopback port (mailbox/internal/dovetest);
# this script only makes sure the binary exists. Needs root (apt-get).
set -eu
if command -v dovecot >/dev/null 2>&1 || [ -x /usr/sbin/dovecot ]; then
	echo "dovecot already installed"
	exit 0
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends dovecot-imapd
# A distribution may start a system instance; the tests do not need it.
$SUDO systemctl stop dovecot 2>/dev/null || $SUDO service dovecot stop 2>/dev/null || true
