cp /workspace/config.ini /workspace/config.ini.bak
