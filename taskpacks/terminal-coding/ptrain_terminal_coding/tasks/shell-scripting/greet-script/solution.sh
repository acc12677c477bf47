printf '#!/bin/bash\necho "Hello, $1!"\n' > /workspace/greet.sh
