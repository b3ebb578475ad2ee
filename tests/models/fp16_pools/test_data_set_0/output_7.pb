
By2_maxJÀ%fCfIfIfIfpfpfpfÑeÑeIfIfIf^f^f^føeøe¤eûeûe^f^f^føeøeUfUf‚f‚f‚f(f=f=fyfyf‚f‚f‚f1f=fXfyfyfyff1f1fìeXfXfXf•e•e•eÀdfgfgfgfOfOfFfqeffòeOfOfOfFfªe8emfmfmf¶e¶eªeªe8emfmfmfõe˜e|f|feheõeõeõedf|f|f’efffsfsfsfdf’efffsfsfsf)e¿efffİeşeşeşefff2eafafafÉdfffffafafùd³eÈeffffff›e¼e"f"f"ffffeeÎeÎe…f…f…f¨deeÎeÎe…f…f…f¨dRfRfRf:f:f:fjfjf@f@f@fPePeÚejfjfte7f7f7f.ff[f[f+f7f7f7f.ffæe_e+f+f+f
f
f
fæe‰evfvfàefff×e§evfvfeefff§e§e