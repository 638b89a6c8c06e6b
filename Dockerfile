# GradLab: a Streamlit web lab. Build and run:
#   docker build -t gradlab .
#   docker run --rm -p 8501:8501 gradlab        # then open http://localhost:8501
# See docs/DEPLOYMENT.md for replicas, sticky sessions and Community Cloud.
FROM python:3.11-slim

# One thread per numeric library: GradLab's tensors are small and every session's
# script runs in its own thread, so intra-op thread pools only contend for the
# cores. Two malloc arenas: every rerun runs in a fresh thread, and glibc's
# per-thread arenas otherwise keep a closed class's memory; Python's small objects
# from glibc's malloc too (PYTHONMALLOC=malloc): pymalloc frees an arena only when
# all of it is free, and a class on the Round-off lab left them part-used (+34 %
# after the load against +25 %, for ~5 % more CPU); oneDNN's kernel cache small, as
# gradlab/ui/runtime.py sets it (docs/DEPLOYMENT.md).
# The STREAMLIT_* variables repeat the command line below for any other entry
# point (e.g. `docker run ... streamlit run app.py`).
# GRADLAB_LIMITS=classroom: the image is meant for public links shared with a class,
# so every request a visitor can make stays well under a second of CPU (tensors of
# 65,536 elements, sampled checks of 50, round-off comparisons of 20,000 points, exact
# derivatives within 1 s; gradlab/limits.py PROFILES). The defaults (a million elements,
# 1,000 samples) are for one person's own machine; override with -e GRADLAB_LIMITS=...
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    OMP_NUM_THREADS=1 \
    MKL_NUM_THREADS=1 \
    OPENBLAS_NUM_THREADS=1 \
    MALLOC_ARENA_MAX=2 \
    PYTHONMALLOC=malloc \
    ONEDNN_PRIMITIVE_CACHE_CAPACITY=16 \
    GRADLAB_LIMITS=classroom \
    STREAMLIT_SERVER_HEADLESS=true \
    STREAMLIT_SERVER_ADDRESS=0.0.0.0 \
    STREAMLIT_SERVER_PORT=8501 \
    STREAMLIT_BROWSER_GATHER_USAGE_STATS=false

WORKDIR /app

# CPU-only torch first. PyPI's Linux torch wheel pulls in the CUDA libraries
# (several GB); the PyTorch CPU wheel index serves the same version without them
# (its version is 2.13.0+cpu, which satisfies requirements.txt's torch==2.13.0).
RUN pip install --index-url https://download.pytorch.org/whl/cpu "torch==2.13.0"

# The rest from PyPI; torch is already satisfied, so pip keeps the CPU build.
COPY requirements.txt ./
RUN pip install -r requirements.txt

# A user without a password or shell privileges; the code stays owned by root,
# so the app cannot rewrite itself.
RUN useradd --create-home --uid 10001 --shell /usr/sbin/nologin gradlab
COPY app.py serve.py ./
COPY pages/ ./pages/
COPY gradlab/ ./gradlab/
COPY .streamlit/ ./.streamlit/
USER gradlab

EXPOSE 8501

# slim has no curl: ask the health endpoint with the standard library.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; r = urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4); sys.exit(0 if r.read() == b'ok' else 1)"]

# serve.py is app.py plus headers that stop other sites from framing the app
# (Content-Security-Policy frame-ancestors 'self', X-Frame-Options SAMEORIGIN).
CMD ["streamlit", "run", "serve.py", \
     "--server.headless", "true", \
     "--server.address", "0.0.0.0", \
     "--server.port", "8501", \
     "--browser.gatherUsageStats", "false"]
