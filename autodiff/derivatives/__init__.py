"""Building derivatives: a function's graph, differentiated, finished as a function
(:mod:`~autodiff.derivatives.build`), kept on the function per options
(:mod:`~autodiff.derivatives.cache`), and Jacobians assembled from products
(:mod:`~autodiff.derivatives.jacobian`)."""
