#!/bin/sh
echo "app 1.0"
